package io.datum.cdc;

/**
 * The connection to PostgreSQL could not be opened or was lost (I/O error, walsender terminated,
 * server restart). The stream may be resumed by starting a new source on the same slot and store.
 */
public class CdcConnectionException extends CdcException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcConnectionException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcConnectionException(String message, Throwable cause) {
    super(message, cause);
  }
}
