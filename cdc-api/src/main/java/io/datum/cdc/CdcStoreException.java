package io.datum.cdc;

/**
 * A checkpoint store failed: an I/O error, a write that could not be made durable, or a corrupt or
 * truncated on-disk state. The message names the file or location. Nothing is silently treated as
 * empty.
 */
public class CdcStoreException extends CdcException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcStoreException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
