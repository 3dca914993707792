package io.datum.cdc;

/**
 * The root of every exception datum-cdc throws. Unchecked; catch a subtype to react to one kind of
 * failure:
 *
 * <ul>
 *   <li>{@link CdcConfigurationException}: bad input given by the caller (slot name, URI, option);
 *       retrying does not help.
 *   <li>{@link CdcConnectionException}: the connection to PostgreSQL failed or was lost;
 *       reconnecting may help.
 *   <li>{@link CdcReplicationException}: the server refused replication (slot missing or active
 *       elsewhere, publication missing, permission denied, WAL removed); needs an operator.
 *   <li>{@link CdcDecodingException}: a pgoutput message could not be decoded.
 *   <li>{@link CdcCheckpointException}: an acknowledgement that does not fit the stream.
 *   <li>{@link CdcStoreException}: a checkpoint store failed to read or write durably.
 * </ul>
 */
public class CdcException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, naming the input; not null
   */
  public CdcException(String message) {
    super(message);
  }

  /**
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   */
  public CdcException(String message, Throwable cause) {
    super(message, cause);
  }
}
