/** An unsigned transaction for the merchant's wallet to sign and send. */
export class UnsignedTxResponse {
  /**
   * The transaction, base64, unsigned: the merchant wallet is its fee payer and only signer.
   * @example "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQABA..."
   */
  unsignedTx!: string;

  /** The block height after which it can no longer land (about a minute). @example 312345678 */
  lastValidBlockHeight!: number;
}
