package io.datum.cdc;

/**
 * A pgoutput message could not be decoded (truncated, malformed, or referring to an unknown
 * relation). The message names the message type and the byte offset (PostgreSQL docs, 55.9 Logical
 * Replication Message Formats).
 */
public class CdcDecodingException extends CdcException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcDecodingException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcDecodingException(String message, Throwable cause) {
    super(message, cause);
  }
}
