import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MerchantsService } from './merchants.service';

@Module({
  imports: [AuthModule],
  providers: [MerchantsService],
  exports: [MerchantsService],
})
export class MerchantsModule {}
