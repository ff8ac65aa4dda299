import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ChainHealthIndicator } from './chain.health';
import { DrainState } from './drain-state';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ChainHealthIndicator, DrainState],
  exports: [DrainState],
})
export class HealthModule {}
