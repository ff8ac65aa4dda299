import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ChainHealthIndicator } from './chain.health';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ChainHealthIndicator],
})
export class HealthModule {}
