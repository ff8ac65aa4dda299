import { Body, Controller, Get, HttpCode, HttpStatus, Patch, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { JsonArrayResponse } from '../common/http/json-array-response';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { CustomersService } from './customers.service';
import { CreateCustomerDto, ListCustomersQueryDto, UpdateCustomerDto } from './dto/customer.dto';
import { CustomerListItemResponse, CustomerResponse } from './dto/customer.response';

/**
 * The customers API. `GET /api/customers/:id`, the customer with its invoices and
 * subscriptions, is served by the customer-detail module, which sits above customers, invoices
 * and subscriptions (docs/architecture.md).
 */
@ApiTags('Customers')
@ApiAuthenticated()
@Controller('api/customers')
export class CustomersController {
  constructor(private readonly customers: CustomersService) {}

  /**
   * Lists the merchant's customers, newest first, each with `_count`: all of them, or a page
   * (`limit`, `startingAfter`).
   */
  @Get()
  @ApiOperation({ summary: 'List customers' })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'startingAfter: no such customer'])
  @ApiOkResponse({ type: CustomerListItemResponse, isArray: true })
  async list(
    @MerchantId() merchantId: string,
    @Query() query: ListCustomersQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const out = new JsonArrayResponse(res);
    await this.customers.listJson(merchantId, query, (json) => out.write(json));
    out.end();
  }

  /**
   * Creates a customer, or (same wallet address) updates its e-mail and label where given and
   * returns the existing customer. Always 201.
   */
  @IdempotentPost()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Create or upsert a customer' })
  @ApiJsonBodyErrors(ErrorCode.VALIDATION_ERROR)
  async create(
    @MerchantId() merchantId: string,
    @Body() body: CreateCustomerDto,
  ): Promise<CustomerResponse> {
    return (await this.customers.upsert(merchantId, body)).customer;
  }

  /** Changes the supplied fields; `null` clears e-mail or label. */
  @Patch(':id')
  @ApiOperation({ summary: 'Update a customer' })
  @ApiJsonBodyErrors(ErrorCode.NOT_FOUND, [ErrorCode.VALIDATION_ERROR, 'email: must be an email'])
  update(
    @MerchantId() merchantId: string,
    @IdParam('Customer') id: string,
    @Body() body: UpdateCustomerDto,
  ): Promise<CustomerResponse> {
    return this.customers.update(merchantId, id, body);
  }
}
