import { IsOptional, IsString } from 'class-validator';
import { MaxLength, MinLength } from '../../common/validators/chars';
import { IsVisibleText } from '../../common/validators/visible-text';

export class CreateApiKeyDto {
  /**
   * What the key is for, 1-100 characters.
   * @example "Production backend"
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsVisibleText()
  label?: string;
}
