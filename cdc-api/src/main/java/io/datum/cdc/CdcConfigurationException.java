package io.datum.cdc;

/**
 * Bad input from the caller: an invalid slot name, store URI, option or builder argument. Retrying
 * with the same input fails the same way.
 */
public class CdcConfigurationException extends CdcException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcConfigurationException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcConfigurationException(String message, Throwable cause) {
    super(message, cause);
  }
}
