package io.datum.cdc;

/**
 * PostgreSQL refused to replicate: the slot does not exist or is active for another process
 * (SQLSTATE 55006), the publication does not exist, the role lacks REPLICATION, or the slot's WAL
 * was removed. Retrying does not help until an operator acts.
 */
public class CdcReplicationException extends CdcException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcReplicationException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcReplicationException(String message, Throwable cause) {
    super(message, cause);
  }
}
