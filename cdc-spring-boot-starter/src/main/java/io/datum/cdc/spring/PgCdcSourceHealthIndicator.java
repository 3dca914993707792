package io.datum.cdc.spring;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.SlotStatus;
import io.datum.cdc.core.SourceMetrics;
import io.datum.cdc.core.config.SourceState;
import java.sql.SQLException;
import java.util.regex.Pattern;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/**
 * The health of the auto-configured source: UP while it streams, UNKNOWN while it starts (or has
 * not started), OUT_OF_SERVICE while it reconnects, DOWN when it failed or ended without being
 * stopped, or when the slot's {@code wal_status} is {@code lost} (the server removed WAL the slot
 * needs: changes were lost); and, with {@code datum.cdc.health.lag-threshold-bytes}, {@code
 * datum.cdc.health.lag-status} (DOWN by default) while the slot's lag exceeds it. Details: slot,
 * state, watermark, pending transactions, reconnects, slot active and wal_status ({@link
 * PgCdcSource#readSlotStatus()}, read at most once per {@code datum.cdc.health.lag-cache-time}),
 * lag bytes (with a threshold), the failure (its message, with user names and passwords in JDBC
 * URLs replaced by {@code ***}).
 */
public class PgCdcSourceHealthIndicator extends AbstractHealthIndicator {

  /** A JDBC URL's user info ({@code //user:password@}) or its user/password query parameters. */
  private static final Pattern CREDENTIALS =
      Pattern.compile("(?i)(//)[^/@\\s]+@|([?&;](?:user|password)=)[^&;\\s]*");

  private final PgCdcSourceLifecycle lifecycle;
  private final CdcProperties.Health properties;
  private SlotStatus status;
  private String statusError;
  private long statusReadAt;
  private boolean statusRead;

  /**
   * Creates the indicator.
   *
   * @param lifecycle the running source
   * @param properties {@code datum.cdc.health.*}
   */
  public PgCdcSourceHealthIndicator(
      PgCdcSourceLifecycle lifecycle, CdcProperties.Health properties) {
    super("datum-cdc health check failed");
    this.lifecycle = lifecycle;
    this.properties = properties;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    PgCdcSource source = lifecycle.source();
    SourceState state = source.state();
    SourceMetrics m = source.metrics();
    builder.withDetail("slot", source.slot()).withDetail("state", state.name());
    builder
        .withDetail("watermark", String.valueOf(m.watermark()))
        .withDetail("pendingTransactions", m.pendingTransactions())
        .withDetail("reconnects", m.reconnects());
    Throwable failure = lifecycle.failure();
    if (failure != null) {
      builder.withDetail("error", redact(failure.toString()));
    }
    switch (state) {
      case SNAPSHOTTING, STREAMING -> builder.up();
      case RECONNECTING -> builder.outOfService();
      case NEW, STARTING -> builder.unknown();
      case STOPPING, STOPPED -> {
        if (lifecycle.stopRequested()) {
          builder.outOfService();
        } else {
          builder.down();
        }
      }
      case FAILED -> builder.down();
      default -> builder.unknown();
    }
    SlotStatus slot = slotStatus(source);
    if (slot == null) {
      builder.withDetail("slotActive", "unknown").withDetail("walStatus", "unknown");
      builder.withDetail("slotStatusError", statusError);
    } else {
      builder.withDetail("slotActive", slot.active());
      builder.withDetail(
          "walStatus", slot.walStatus() == null ? "unknown" : slot.walStatus().sqlName());
      if (slot.standby()) {
        Long replay = slot.standbyReplayLagBytes();
        builder.withDetail("standby", true);
        builder.withDetail("standbyReplayLagBytes", replay == null ? "unknown" : replay);
      }
    }
    Long threshold = properties.getLagThresholdBytes();
    if (threshold != null && threshold > 0 && state == SourceState.STREAMING) {
      Long bytes = slot == null ? null : slot.lagBytes();
      builder.withDetail("lagBytes", bytes == null ? "unknown" : bytes);
      builder.withDetail("lagThresholdBytes", threshold);
      if (bytes != null && bytes > threshold) {
        builder.status(new Status(properties.getLagStatus(), "lag over threshold"));
      }
    }
    if (slot != null && slot.walStatus() == SlotStatus.WalStatus.LOST) {
      builder.status(
          new Status(
              Status.DOWN.getCode(),
              "wal_status is lost: the slot's WAL was removed by the server"));
    } else if (slot != null && slot.invalidationReason() != null) {
      builder.withDetail("invalidationReason", slot.invalidationReason());
      builder.status(
          new Status(
              Status.DOWN.getCode(),
              "the slot is invalidated ("
                  + slot.invalidationReason()
                  + "): the changes since its position are gone"));
    }
  }

  /**
   * Returns {@code message} with the user info and user/password parameters of URLs in it replaced
   * by {@code ***}.
   *
   * @param message a message, or null
   * @return the message without credentials, or null
   */
  static String redact(String message) {
    if (message == null) {
      return null;
    }
    return CREDENTIALS
        .matcher(message)
        .replaceAll(r -> r.group(1) != null ? "//***@" : r.group(2) + "***");
  }

  /** The slot's status, read at most once per lag cache time; null if the last read failed. */
  private synchronized SlotStatus slotStatus(PgCdcSource source) {
    long now = System.nanoTime();
    if (statusRead && now - statusReadAt < properties.getLagCacheTime().toNanos()) {
      return status;
    }
    try {
      status = source.readSlotStatus();
      statusError = null;
    } catch (SQLException | RuntimeException e) {
      status = null;
      statusError = redact(e.getMessage());
    }
    statusRead = true;
    statusReadAt = now;
    return status;
  }
}
