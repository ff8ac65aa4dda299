import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiAuthenticated, ApiErrors } from '../common/swagger/api-errors.decorator';
import { CustomerDetailService } from './customer-detail.service';
import { CustomerDetailResponse } from './dto/customer-detail.response';

@ApiTags('Customers')
@ApiAuthenticated()
@Controller('api/customers')
export class CustomerDetailController {
  constructor(private readonly detail: CustomerDetailService) {}

  /** The customer with its full invoice and subscription history, each newest first. */
  @Get(':id')
  @ApiOperation({ summary: 'Get a customer' })
  @ApiErrors(ErrorCode.NOT_FOUND)
  get(
    @MerchantId() merchantId: string,
    @IdParam('Customer') id: string,
  ): Promise<CustomerDetailResponse> {
    return this.detail.get(merchantId, id);
  }
}
