import { Body, Controller, Delete, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeysService } from '../auth/api-keys.service';
import { SecretResponse } from '../common/decorators/secret-response.decorator';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { CreateApiKeyDto } from './dto/api-key.dto';
import {
  ApiKeyResponse,
  CreatedApiKeyResponse,
  RevokedResponse,
  toApiKeyResponse,
} from './dto/api-key.response';

@ApiTags('API keys')
@ApiAuthenticated()
@Controller('api/settings/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** Active (non-revoked) keys, newest first. Secrets are never listed. */
  @Get()
  @ApiOperation({ summary: 'List API keys' })
  async list(@MerchantId() merchantId: string): Promise<ApiKeyResponse[]> {
    return (await this.apiKeys.list(merchantId)).map(toApiKeyResponse);
  }

  /** Creates a key. The full secret is in `key`, in this response only. */
  @IdempotentPost()
  @SecretResponse()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Create an API key' })
  @ApiJsonBodyErrors([
    ErrorCode.VALIDATION_ERROR,
    'label: must be shorter than or equal to 100 characters',
  ])
  async create(
    @MerchantId() merchantId: string,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyResponse> {
    const { view, key } = await this.apiKeys.create(merchantId, body.label ?? null);
    return { ...toApiKeyResponse(view), key };
  }

  /** Revokes a key immediately and irreversibly; requests with it then get 401. A key may revoke itself. */
  @Delete(':id')
  @ApiOperation({ summary: 'Revoke an API key' })
  @ApiErrors([ErrorCode.NOT_FOUND, 'API key not found'])
  async revoke(
    @MerchantId() merchantId: string,
    @IdParam('API key') id: string,
  ): Promise<RevokedResponse> {
    await this.apiKeys.revoke(merchantId, id);
    return { success: true };
  }
}
