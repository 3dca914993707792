package io.datum.cdc.core.relation;

import io.datum.cdc.CdcDecodingException;

/**
 * A column value of a change could not be decoded (the message itself was well formed). The message
 * names the pgoutput message, the byte offset, the column, the table, the type and an excerpt of
 * the value; {@link #failure()} gives the same facts as fields.
 */
public final class ValueDecodingException extends CdcDecodingException {
  private static final long serialVersionUID = 1L;

  private final transient ValueFailure failure;

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   * @param failure the facts of the failure; not null
   */
  ValueDecodingException(String message, Throwable cause, ValueFailure failure) {
    super(message, cause);
    this.failure = failure;
  }

  /** Returns the table, column, type and reason of the failure; null after deserialization. */
  public ValueFailure failure() {
    return failure;
  }
}
