import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  MikroOrmHealthIndicator,
} from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { ChainHealthIndicator } from './chain.health';

export class LivenessResponse {
  @ApiProperty({ example: 'ok', enum: ['ok'] })
  status!: string;
}

@ApiTags('Health')
@Public()
// Load balancers and orchestrators poll these: never rate-limit them.
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: MikroOrmHealthIndicator,
    private readonly chain: ChainHealthIndicator,
  ) {}

  /**
   * Readiness: 200 when the database and the chain RPC answer, 503 otherwise. Body in the
   * terminus format.
   */
  @Get()
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness check (database and chain RPC)' })
  @ApiResponse({
    status: 503,
    description: 'A dependency is down (terminus body)',
    schema: {
      example: {
        status: 'error',
        info: {},
        error: { database: { status: 'down', message: 'timeout of 2000ms exceeded' } },
        details: { database: { status: 'down', message: 'timeout of 2000ms exceeded' } },
      },
    },
  })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.db.pingCheck('database', { timeout: 2000 }),
        () => this.chain.pingCheck('chain', 2000),
      ]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) {
        res.status(503);
        return error.getResponse() as HealthCheckResult;
      }
      throw error;
    }
  }

  /** Liveness: the process serves HTTP. Touches nothing else. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness check' })
  @ApiResponse({ status: 200, type: LivenessResponse })
  live(): LivenessResponse {
    return { status: 'ok' };
  }
}
