package io.datum.cdc.core.config;

/**
 * The lifecycle state of a {@link io.datum.cdc.core.PgCdcSource}, from {@link
 * io.datum.cdc.core.PgCdcSource#state()}. A source moves forward only: {@code NEW -> STARTING ->
 * [SNAPSHOTTING ->] STREAMING (<-> RECONNECTING) -> STOPPING -> STOPPED} or {@code FAILED}. New
 * states may be added in later versions; treat an unknown one as running.
 */
public enum SourceState {
  /** Built, {@link io.datum.cdc.core.PgCdcSource#start} not called yet. */
  NEW,
  /**
   * {@link io.datum.cdc.core.PgCdcSource#start} is connecting, checking the slot, publication and
   * stored checkpoint; an initial snapshot exported at slot creation is set up here.
   */
  STARTING,
  /**
   * Start returned and the initial snapshot exported at the slot's creation (an initial snapshot
   * mode with a new slot) is being read and delivered; the stream starts after it, so the slot is
   * held by this source's replication connection but streams nothing (its lag grows) and the
   * watermark stays at the slot's consistent point. With initial-only the source stays here until
   * the snapshot is acknowledged and stored, then stops. Progress: {@link
   * io.datum.cdc.core.PgCdcSource#metrics()}'s snapshot figures. A snapshot read while streaming
   * (an initial snapshot on an existing slot, one asked for, one resumed after a restart) shows
   * {@link #STREAMING} with {@link io.datum.cdc.core.PgCdcSource#snapshotInProgress()} true.
   */
  SNAPSHOTTING,
  /**
   * Start returned: the replication connection is open and changes are read and delivered (a
   * snapshot, initial or online, may be in progress besides: {@link
   * io.datum.cdc.core.PgCdcSource#snapshotInProgress()}).
   */
  STREAMING,
  /**
   * The replication connection was lost and the source is reconnecting with backoff (see {@code
   * Builder.reconnect}); the handler may still be handling events queued before the loss.
   */
  RECONNECTING,
  /**
   * {@link io.datum.cdc.core.PgCdcSource#stop()} was called or the source is failing: the threads
   * are finishing and the last acknowledgements are being stored; the start future is not completed
   * yet.
   */
  STOPPING,
  /**
   * Stopped normally: the start future completed normally, or {@link
   * io.datum.cdc.core.PgCdcSource#stop()} was called before start. Final.
   */
  STOPPED,
  /**
   * Failed: the start future completed exceptionally (connection lost for good, the handler threw,
   * a change that does not decode, ...), or {@link io.datum.cdc.core.PgCdcSource#start} threw.
   * Final.
   */
  FAILED;

  /** Returns true for {@link #STOPPED} and {@link #FAILED}: the source will not deliver again. */
  public boolean isTerminal() {
    return this == STOPPED || this == FAILED;
  }
}
