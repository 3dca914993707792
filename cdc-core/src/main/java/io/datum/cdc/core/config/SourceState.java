package io.datum.cdc.core.config;

/**
 * The lifecycle state of a {@link io.datum.cdc.core.PgCdcSource}, from {@link
 * io.datum.cdc.core.PgCdcSource#state()}. A source moves forward only: {@code NEW -> STARTING ->
 * STREAMING (<-> RECONNECTING) -> STOPPING -> STOPPED} or {@code FAILED}. New states may be added
 * in later versions; treat an unknown one as running.
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
