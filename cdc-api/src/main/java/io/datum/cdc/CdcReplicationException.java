package io.datum.cdc;

import java.util.Objects;

/**
 * PostgreSQL refused to replicate, or a check before streaming found that starting would lose
 * changes: the slot does not exist, is active for another process (SQLSTATE 55006), is invalidated
 * or was moved, the publication does not exist, the role lacks a privilege, or the stored watermark
 * is after the server's WAL. {@link #reason()} says which, so that a caller decides by the reason,
 * never by the message text. Retrying helps only for {@link Reason#SLOT_ACTIVE} (another consumer
 * may let go); the others need an operator.
 */
public class CdcReplicationException extends CdcException {
  private static final long serialVersionUID = 1L;

  /** Why replication was refused. */
  public enum Reason {
    /** The publication does not exist and the source may not create it. */
    PUBLICATION_MISSING,
    /** The replication slot does not exist (or was dropped) and the source may not create it. */
    SLOT_MISSING,
    /** Another process streams from the slot (SQLSTATE 55006, or {@code active} in the catalog). */
    SLOT_ACTIVE,
    /** The slot's required WAL was removed ({@code wal_status lost}): its changes are gone. */
    SLOT_INVALIDATED,
    /** The slot is not a logical slot of the {@code pgoutput} plugin. */
    SLOT_INCOMPATIBLE,
    /** The slot's {@code confirmed_flush_lsn} is after the stored watermark: it was moved. */
    SLOT_AHEAD,
    /** The stored watermark is after the server's current WAL position (another cluster?). */
    WATERMARK_AFTER_WAL,
    /**
     * The stored checkpoint was written for another cluster or database (system identifier or
     * database name differ, {@link ClusterIdentity}): its positions mean nothing here.
     */
    CLUSTER_MISMATCH,
    /**
     * The server is on a timeline that does not continue the stored checkpoint's: not a descendant
     * of it, or it branched off before the stored watermark (acknowledged changes are not on it).
     */
    TIMELINE_DIVERGED,
    /**
     * The stored checkpoint was written while streaming another publication: its watermark passed
     * over changes that publication filtered out, which the configured one may publish.
     */
    PUBLICATION_CHANGED,
    /** The role lacks a privilege (SQLSTATE 42501), such as REPLICATION. */
    PERMISSION_DENIED,
    /** Any other refusal by the server; the message carries its SQLSTATE. */
    SERVER_ERROR,
    /** The calling thread was interrupted while it waited for the server. */
    INTERRUPTED
  }

  private final Reason reason;

  /**
   * @param reason why; not null
   * @param message what failed, naming the input; not null
   * @throws NullPointerException if {@code reason} is null
   */
  public CdcReplicationException(Reason reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /**
   * @param reason why; not null
   * @param message what failed, naming the input; not null
   * @param cause the underlying failure, may be null
   * @throws NullPointerException if {@code reason} is null
   */
  public CdcReplicationException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /**
   * Returns why replication was refused.
   *
   * @return the reason, never null
   */
  public Reason reason() {
    return reason;
  }
}
