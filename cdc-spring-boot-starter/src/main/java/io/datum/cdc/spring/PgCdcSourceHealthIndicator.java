package io.datum.cdc.spring;

import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.SourceMetrics;
import io.datum.cdc.core.SourceState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/**
 * The health of the auto-configured source: UP while it streams, UNKNOWN while it starts (or has
 * not started), OUT_OF_SERVICE while it reconnects, DOWN when it failed or ended without being
 * stopped; and, with {@code datum.cdc.health.lag-threshold-bytes}, {@code
 * datum.cdc.health.lag-status} (DOWN by default) while the slot's lag exceeds it. Details: slot,
 * state, watermark, pending transactions, reconnects, lag bytes, the failure.
 */
public class PgCdcSourceHealthIndicator extends AbstractHealthIndicator {

  /** The slot's lag behind the server's WAL position, in bytes; NULL without a confirmed LSN. */
  static final String LAG_QUERY =
      "SELECT pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()"
          + " ELSE pg_current_wal_lsn() END, confirmed_flush_lsn)::int8"
          + " FROM pg_catalog.pg_replication_slots WHERE slot_name = ?";

  private final PgCdcSourceLifecycle lifecycle;
  private final CdcProperties.Health properties;
  private Long lag;
  private long lagReadAt;
  private boolean lagRead;

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
      builder.withDetail("error", failure.toString());
    }
    switch (state) {
      case STREAMING -> builder.up();
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
    Long threshold = properties.getLagThresholdBytes();
    if (threshold != null && threshold > 0 && state == SourceState.STREAMING) {
      Long bytes = lag(source);
      builder.withDetail("lagBytes", bytes == null ? "unknown" : bytes);
      builder.withDetail("lagThresholdBytes", threshold);
      if (bytes != null && bytes > threshold) {
        builder.status(new Status(properties.getLagStatus(), "lag over threshold"));
      }
    }
  }

  private synchronized Long lag(PgCdcSource source) {
    long now = System.nanoTime();
    if (lagRead && now - lagReadAt < properties.getLagCacheTime().toNanos()) {
      return lag;
    }
    try (Connection c = source.openConnection();
        PreparedStatement s = c.prepareStatement(LAG_QUERY)) {
      s.setString(1, source.slot());
      try (ResultSet r = s.executeQuery()) {
        lag = r.next() ? r.getObject(1, Long.class) : null;
      }
    } catch (SQLException e) {
      lag = null;
    }
    lagRead = true;
    lagReadAt = now;
    return lag;
  }
}
