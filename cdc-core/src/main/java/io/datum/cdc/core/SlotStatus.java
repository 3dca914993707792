package io.datum.cdc.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Objects;

/**
 * A replication slot's state as the server reports it in {@code pg_replication_slots} (PostgreSQL
 * docs, System Views, pg_replication_slots), read at one moment by {@link #read} or {@link
 * PgCdcSource#readSlotStatus()}. Immutable. Each read is one query; callers that poll (metrics,
 * health checks) cache the result.
 *
 * @param slot the slot's name, never null
 * @param lagBytes bytes of WAL between the server's position ({@code pg_current_wal_lsn()} on a
 *     primary, {@code pg_last_wal_replay_lsn()} on a hot standby, the WAL a standby's walsender can
 *     decode; PostgreSQL docs, System Administration Functions) and the slot's {@code
 *     confirmed_flush_lsn}: WAL the server keeps for the slot; null when the slot has no confirmed
 *     position yet or a standby has replayed nothing
 * @param active whether a process is streaming from the slot ({@code active})
 * @param activePid the process id of the walsender using the slot ({@code active_pid}), null when
 *     inactive
 * @param walStatus the availability of the WAL the slot needs ({@code wal_status}), null when the
 *     server reports none (the slot never reserved WAL)
 * @param safeWalSizeBytes bytes of WAL that can still be written before the slot risks losing
 *     needed WAL ({@code safe_wal_size}), null when unlimited ({@code max_slot_wal_keep_size = -1})
 *     or the slot is {@code lost}; may be negative
 * @param invalidationReason why the slot can no longer be used, or null while it can: {@code
 *     pg_replication_slots.invalidation_reason} on PostgreSQL 17+ ({@code wal_removed}, {@code
 *     rows_removed}, {@code wal_level_insufficient}; 18: {@code idle_timeout}); on 16 {@code
 *     conflict} when {@code conflicting} is true (a standby's slot in conflict with recovery) and
 *     {@code wal_removed} when {@code wal_status} is {@code lost}
 * @param standby whether the server is a hot standby ({@code pg_is_in_recovery()})
 * @param standbyReplayLagBytes on a hot standby, bytes of WAL the primary has written (as its
 *     walsender last reported, {@code pg_stat_wal_receiver.latest_end_lsn}) that the standby has
 *     not replayed yet ({@code pg_last_wal_replay_lsn()}): changes the slot cannot decode yet; null
 *     on a primary, when the standby's WAL receiver is not streaming (replication from the primary
 *     stopped: the lag is unknown), or when the role may not read it (pg_read_all_stats)
 */
public record SlotStatus(
    String slot,
    Long lagBytes,
    boolean active,
    Integer activePid,
    WalStatus walStatus,
    Long safeWalSizeBytes,
    String invalidationReason,
    boolean standby,
    Long standbyReplayLagBytes) {

  /** Seconds {@link #read} lets its query run before it fails. */
  public static final int QUERY_TIMEOUT_SECONDS = 5;

  /**
   * The slot's row of {@code pg_replication_slots}; {@code pg_wal_lsn_diff} and the WAL position
   * functions are in PostgreSQL docs, System Administration Functions.
   */
  static final String QUERY =
      "SELECT pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
          + " ELSE pg_current_wal_lsn() END, confirmed_flush_lsn)::int8,"
          + " active, active_pid, wal_status, safe_wal_size,"
          + " "
          + io.datum.cdc.core.server.ServerRole.INVALIDATION_REASON_SQL
          + ","
          + " pg_is_in_recovery(),"
          + " CASE WHEN pg_is_in_recovery() THEN (SELECT greatest(0,"
          + " pg_wal_lsn_diff(latest_end_lsn, pg_last_wal_replay_lsn()))::int8"
          + " FROM pg_catalog.pg_stat_wal_receiver WHERE status = 'streaming') END"
          + " FROM pg_catalog.pg_replication_slots s WHERE slot_name = ?";

  /**
   * The values of {@code pg_replication_slots.wal_status} (PostgreSQL 13 and later; PostgreSQL
   * docs, System Views, pg_replication_slots).
   */
  public enum WalStatus {
    /** The WAL the slot needs is within {@code max_wal_size}. */
    RESERVED,
    /**
     * Beyond {@code max_wal_size}, but kept by {@code max_slot_wal_keep_size} or {@code
     * wal_keep_size}.
     */
    EXTENDED,
    /**
     * The slot no longer retains all the WAL it needs; some will be removed at the next checkpoint,
     * unless the slot catches up first.
     */
    UNRESERVED,
    /** WAL the slot needs was removed: the slot can no longer be used; changes were lost. */
    LOST;

    /** Returns the server's spelling, lower case ({@code reserved}, ...). */
    public String sqlName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static WalStatus of(String sql) {
      return sql == null ? null : valueOf(sql.toUpperCase(Locale.ROOT));
    }
  }

  /**
   * Checks the name.
   *
   * @throws NullPointerException if slot is null
   */
  public SlotStatus {
    Objects.requireNonNull(slot, "slot");
  }

  /**
   * A status of a slot on a primary that is not invalidated, as before the standby's fields.
   *
   * @param slot the slot's name, never null
   * @param lagBytes as the record's component
   * @param active as the record's component
   * @param activePid as the record's component
   * @param walStatus as the record's component
   * @param safeWalSizeBytes as the record's component
   * @throws NullPointerException if slot is null
   */
  public SlotStatus(
      String slot,
      Long lagBytes,
      boolean active,
      Integer activePid,
      WalStatus walStatus,
      Long safeWalSizeBytes) {
    this(
        slot,
        lagBytes,
        active,
        activePid,
        walStatus,
        safeWalSizeBytes,
        walStatus == WalStatus.LOST ? "wal_removed" : null,
        false,
        null);
  }

  /**
   * Reads a slot's status with one query of at most {@value #QUERY_TIMEOUT_SECONDS} seconds.
   *
   * @param connection an open ordinary (not replication) connection to the slot's database, not
   *     null; left open
   * @param slot the slot's name, not null
   * @return the status, never null
   * @throws SQLException if the query fails or times out, or the slot does not exist
   * @throws IllegalArgumentException if the server reports a {@code wal_status} this version does
   *     not know
   */
  public static SlotStatus read(Connection connection, String slot) throws SQLException {
    Objects.requireNonNull(slot, "slot");
    try (PreparedStatement s = connection.prepareStatement(QUERY)) {
      s.setString(1, slot);
      s.setQueryTimeout(QUERY_TIMEOUT_SECONDS); // a scrape never waits long on a stuck server
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          throw new SQLException("replication slot \"" + slot + "\" does not exist");
        }
        return new SlotStatus(
            slot,
            r.getObject(1, Long.class),
            r.getBoolean(2),
            r.getObject(3, Integer.class),
            WalStatus.of(r.getString(4)),
            r.getObject(5, Long.class),
            r.getString(6),
            r.getBoolean(7),
            r.getObject(8, Long.class));
      }
    }
  }
}
