import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MerchantsRepository } from './merchants.repository';
import { MerchantsService } from './merchants.service';

@Module({
  imports: [AuthModule],
  providers: [MerchantsRepository, MerchantsService],
  exports: [MerchantsService],
})
export class MerchantsModule {}
