export { ConfirmSubscribeDto as ConfirmSignatureDto } from '../../checkout/dto/checkout.dto';
