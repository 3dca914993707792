package io.datum.cdc.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.SlotNames;
import io.datum.cdc.cli.common.ServerFailures;
import io.datum.cdc.cli.common.ServerOptions;
import io.datum.cdc.core.SlotStatus;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code pgcdc status --url URL --slot NAME}: what the server says of a slot, as JSON: whether it
 * is active and for which process, its {@code confirmed_flush_lsn} and {@code restart_lsn}, the lag
 * in bytes ({@code pg_current_wal_lsn() - confirmed_flush_lsn}), the WAL it retains in bytes
 * ({@code pg_current_wal_lsn() - restart_lsn}), {@code wal_status}, and on PostgreSQL 17+ {@code
 * failover} and {@code synced} (null before 17), and {@code temporary} (PostgreSQL docs, 53.19
 * pg_replication_slots). On a standby the WAL position is {@code pg_last_wal_replay_lsn()}, so that
 * a standby's copy of a failover slot can be checked before a switchover: {@code synced} true,
 * {@code temporary} false (a copy still temporary is dropped at the promotion), its {@code
 * confirmed_flush_lsn} at the consumer's watermark. Also {@code invalidation_reason} (null while
 * the slot is usable; see {@link SlotStatus#invalidationReason()}), {@code standby} and, on a hot
 * standby, {@code standby_replay_lag_bytes}: how far its replay trails its primary ({@link
 * SlotStatus#standbyReplayLagBytes()}).
 */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = "Print a replication slot's state and lag as JSON.")
final class StatusCommand implements Callable<Integer> {

  private static final String QUERY =
      "SELECT slot_name AS slot, plugin, slot_type, database, active, active_pid,"
          + " confirmed_flush_lsn::text AS confirmed_flush_lsn, restart_lsn::text AS restart_lsn,"
          + " w.lsn::text AS current_wal_lsn,"
          + " pg_wal_lsn_diff(w.lsn, confirmed_flush_lsn)::bigint AS lag_bytes,"
          + " pg_wal_lsn_diff(w.lsn, restart_lsn)::bigint AS retained_wal_bytes,"
          + " wal_status,"
          // failover and synced exist from PostgreSQL 17: read through jsonb, null before
          + " (to_jsonb(s) ->> 'failover')::boolean AS failover,"
          + " (to_jsonb(s) ->> 'synced')::boolean AS synced, temporary"
          + " FROM pg_replication_slots s, (SELECT CASE WHEN pg_is_in_recovery()"
          + " THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END AS lsn) w"
          + " WHERE slot_name = ?";

  @Mixin ServerOptions server;

  @Option(names = "--slot", required = true, description = "replication slot")
  String slot;

  @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
  boolean verbose;

  PrintStream out = System.out;

  @Override
  public Integer call() throws Exception {
    SlotNames.requireValid(slot);
    Map<String, Object> status = new LinkedHashMap<>();
    try (Connection c = DriverManager.getConnection(server.url(), server.properties());
        PreparedStatement ps = c.prepareStatement(QUERY)) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new CdcReplicationException(
              CdcReplicationException.Reason.SLOT_MISSING,
              "replication slot \"" + slot + "\" does not exist");
        }
        ResultSetMetaData meta = rs.getMetaData();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          status.put(meta.getColumnLabel(i), rs.getObject(i));
        }
      }
      // what the library's status adds: why the slot is invalidated, and on a hot standby how far
      // its replay trails its primary
      SlotStatus more = SlotStatus.read(c, slot);
      status.put("invalidation_reason", more.invalidationReason());
      status.put("standby", more.standby());
      status.put("standby_replay_lag_bytes", more.standbyReplayLagBytes());
    } catch (SQLException e) {
      throw ServerFailures.classify(
          "cannot read the state of slot \"" + slot + "\" at " + server.redactedUrl(), e, null);
    }
    new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
        .writeValue(out, status);
    out.println();
    out.flush();
    return 0;
  }
}
