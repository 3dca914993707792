package io.datum.cdc;

/**
 * An acknowledgement that does not fit the stream: an offset of another slot, an event index
 * outside [0, eventCount), an event count that differs from the registered transaction's, or a
 * transaction the source never delivered.
 */
public class CdcCheckpointException extends CdcException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcCheckpointException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcCheckpointException(String message, Throwable cause) {
    super(message, cause);
  }
}
