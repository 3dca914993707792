package io.datum.cdc.core.config;

/**
 * When a source copies the rows that already exist ({@link io.datum.cdc.event.ReadEvent}s) besides
 * streaming changes. Given to {@link
 * io.datum.cdc.core.PgCdcSource.Builder#snapshot(SnapshotMode...)}; {@code pgcdc stream --snapshot
 * MODE[,MODE]}. See docs/snapshots.md for what each guarantees and the Debezium modes each
 * corresponds to.
 */
public enum SnapshotMode {
  /** Never snapshot: only changes committed after the slot's position. The default. */
  NEVER,
  /**
   * Snapshot every published table when the source creates the slot (at the slot's exported
   * snapshot, then stream from its consistent point), or when the checkpoint store holds no
   * completed initial snapshot for the slot (online, while streaming); then stream.
   */
  INITIAL,
  /**
   * Like {@link #INITIAL}, then stop: the source's future completes once every read row is
   * acknowledged. The slot stays at the snapshot's consistent point, so a later source on it
   * streams every change since, without a gap.
   */
  INITIAL_ONLY,
  /**
   * Honour requests to snapshot tables while streaming: {@link
   * io.datum.cdc.core.PgCdcSource#snapshot} and requests written into the WAL ({@code pgcdc
   * snapshot}). Needs PostgreSQL 14 or later (pgoutput's {@code messages} option). Requests through
   * {@link io.datum.cdc.core.PgCdcSource#snapshot} are honoured in every mode but {@link #NEVER};
   * those in the WAL only with this one.
   */
  ON_REQUEST;

  /** Returns the name {@code pgcdc --snapshot} takes: {@code initial-only} for INITIAL_ONLY. */
  public String cliName() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }
}
