import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
  MikroOrmHealthIndicator,
} from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { SchemaCheck } from '../database/schema-check';
import { ChainHealthIndicator } from './chain.health';
import { DrainState } from './drain-state';

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
    private readonly schema: SchemaCheck,
    private readonly drain: DrainState,
    private readonly indicators: HealthIndicatorService,
  ) {}

  /**
   * Readiness: 200 when this instance should get traffic: the database answers, this build's
   * migrations are all applied, the chain RPC answers, and the instance is not draining (a stop
   * has begun). 503 otherwise. Body in the terminus format.
   */
  @Get()
  @HealthCheck()
  @ApiOperation({
    summary: 'Readiness check (database, migrations, chain RPC, not draining)',
  })
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
        () => this.serving(),
        () => this.db.pingCheck('database', { timeout: 2000 }),
        () => this.migrations(),
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

  /** Down once a stop has begun: the instance finishes what it has and takes nothing new. */
  private serving(): HealthIndicatorResult<'instance'> {
    const indicator = this.indicators.check('instance');
    return this.drain.draining
      ? indicator.down({ message: 'draining: this instance is shutting down' })
      : indicator.up();
  }

  /** Down while this build has migrations the database lacks (another instance is applying them). */
  private async migrations(): Promise<HealthIndicatorResult<'migrations'>> {
    const indicator = this.indicators.check('migrations');
    try {
      const pending = await this.schema.pending();
      return pending.length
        ? indicator.down({ message: `${pending.length} migration(s) not applied`, pending })
        : indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
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
