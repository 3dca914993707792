package io.datum.cdc.spring;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SnapshotMode;

/** Turns {@link CdcProperties} into a {@link PgCdcSource.Builder}; unset options keep defaults. */
public final class PgCdcSourceFactory {

  private PgCdcSourceFactory() {}

  /**
   * Returns a builder with every property that is set applied, and the given store.
   *
   * @param p the bound properties
   * @param store the checkpoint store the source uses
   * @return the builder, not yet built
   * @throws IllegalStateException naming the property when jdbc-url, slot or publication is unset
   */
  public static PgCdcSource.Builder builder(CdcProperties p, CdcCheckpointStore store) {
    require(p.getJdbcUrl(), "datum.cdc.jdbc-url");
    require(p.getSlot(), "datum.cdc.slot");
    require(p.getPublication(), "datum.cdc.publication");
    PgCdcSource.Builder b =
        PgCdcSource.builder()
            .jdbcUrl(p.getJdbcUrl())
            .slot(p.getSlot())
            .publication(p.getPublication())
            .checkpointStore(store);
    if (p.getUser() != null) {
      b.user(p.getUser());
    }
    if (p.getPassword() != null) {
      b.password(p.getPassword());
    }
    p.getConnectionProperties().forEach(b::connectionProperty);
    if (p.getCreateSlot() != null) {
      b.createSlot(p.getCreateSlot());
    }
    if (p.getCreatePublication() != null) {
      b.createPublication(p.getCreatePublication(), p.getTables().toArray(String[]::new));
    }
    if (p.getHandoffCapacity() != null) {
      b.handoffCapacity(p.getHandoffCapacity());
    }
    if (p.getStatusInterval() != null) {
      b.statusInterval(p.getStatusInterval());
    }
    if (p.getStopTimeout() != null) {
      b.stopTimeout(p.getStopTimeout());
    }
    if (p.getTrustSlotPosition() != null) {
      b.trustSlotPosition(p.getTrustSlotPosition());
    }
    if (p.getAllowClusterChange() != null) {
      b.allowClusterChange(p.getAllowClusterChange());
    }
    if (p.getAllowPublicationChange() != null) {
      b.allowPublicationChange(p.getAllowPublicationChange());
    }
    if (p.getFailoverSlot() != null) {
      b.failoverSlot(p.getFailoverSlot());
    }
    CdcProperties.Reconnect r = p.getReconnect();
    if (r.getAttempts() != null || r.getInitialBackoff() != null || r.getMaxBackoff() != null) {
      b.reconnect(
          r.getAttempts() != null ? r.getAttempts() : Integer.MAX_VALUE,
          r.getInitialBackoff() != null ? r.getInitialBackoff() : java.time.Duration.ofMillis(200),
          r.getMaxBackoff() != null ? r.getMaxBackoff() : java.time.Duration.ofSeconds(30));
    }
    if (p.getAcknowledgementDurability() != null) {
      b.acknowledgementDurability(p.getAcknowledgementDurability());
    }
    if (p.getOnDecodeError() != null) {
      b.onDecodeError(p.getOnDecodeError());
    }
    CdcProperties.Snapshot s = p.getSnapshot();
    if (!s.getModes().isEmpty()) {
      b.snapshot(s.getModes().toArray(SnapshotMode[]::new));
    }
    if (s.getParallelism() != null) {
      b.snapshotParallelism(s.getParallelism());
    }
    if (s.getChunkRows() != null) {
      b.snapshotChunkRows(s.getChunkRows());
    }
    if (p.getMessages() != null) {
      b.messages(p.getMessages());
    }
    if (p.getProtocolVersion() != null) {
      b.protocolVersion(p.getProtocolVersion());
    }
    if (p.getStreaming() != null) {
      b.streaming(p.getStreaming());
    }
    if (p.getTwoPhase() != null) {
      b.twoPhase(p.getTwoPhase());
    }
    if (p.getBinary() != null) {
      b.binary(p.getBinary());
    }
    if (p.getOrigin() != null) {
      b.origin(p.getOrigin());
    }
    if (p.getMemoryBudget() != null) {
      b.memoryBudget(p.getMemoryBudget());
    }
    if (p.getSpillDirectory() != null) {
      b.spillDirectory(p.getSpillDirectory());
    }
    if (p.getWaitForSlot() != null) {
      b.waitForSlot(p.getWaitForSlot());
    }
    if (p.getSlotCreationTimeout() != null) {
      b.slotCreationTimeout(p.getSlotCreationTimeout());
    }
    return b;
  }

  private static void require(String value, String property) {
    if (value == null || value.isBlank()) {
      throw new IllegalStateException(
          "datum-cdc: the property " + property + " is not set (or set datum.cdc.enabled=false)");
    }
  }
}
