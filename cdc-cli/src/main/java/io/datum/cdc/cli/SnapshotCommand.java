package io.datum.cdc.cli;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.SlotNames;
import io.datum.cdc.TableId;
import io.datum.cdc.cli.common.ServerFailures;
import io.datum.cdc.cli.common.ServerOptions;
import io.datum.cdc.cli.common.StoreUris;
import io.datum.cdc.core.SnapshotRequests;
import io.datum.cdc.core.errors.PgErrors;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code pgcdc snapshot --url URL --slot NAME --table schema.table ...}: asks the {@code pgcdc
 * stream} (or library source) of a slot, running with {@code --snapshot on-request}, to snapshot
 * tables while it streams, by writing the request into the WAL ({@link SnapshotRequests}). With
 * {@code --store}, a table whose snapshot the slot's checkpoint shows in progress is refused.
 */
@Command(
    name = "snapshot",
    mixinStandardHelpOptions = true,
    description =
        "Ask the running stream of a slot (started with --snapshot on-request) to snapshot tables"
            + " while it streams. Writes the request into the WAL (pg_logical_emit_message); no"
            + " table is written to.")
final class SnapshotCommand implements Callable<Integer> {

  @Mixin ServerOptions server;

  @Option(names = "--slot", required = true, description = "the stream's replication slot")
  String slot;

  @Option(
      names = "--table",
      required = true,
      paramLabel = "SCHEMA.TABLE",
      description =
          "a table to snapshot, as its publication publishes it: schema.table, or table for"
              + " schema public (repeatable; quote names as in SQL: '\"Sales\".\"Orders\"')")
  List<String> tables = new ArrayList<>();

  @Option(
      names = "--store",
      paramLabel = "URI",
      description =
          "the stream's checkpoint store: refuse tables whose snapshot is in progress already")
  String store;

  @Option(
      names = "--primary-url",
      paramLabel = "JDBC-URL",
      description =
          "when --url is a hot standby whose stream has the slot: its primary's JDBC URL (same"
              + " user and password), where the request is written; the slot and tables are"
              + " checked on --url")
  String primaryUrl;

  @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
  boolean verbose;

  PrintStream out = System.out;

  PrintStream err = System.err;

  private static boolean inRecovery(Connection c) throws SQLException {
    try (java.sql.Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  @Override
  public Integer call() throws Exception {
    SlotNames.requireValid(slot);
    List<TableId> ids = new ArrayList<>();
    for (String t : tables) {
      ids.add(SnapshotRequests.table(t));
    }
    CdcCheckpoint stored = store == null ? null : refuseTablesInProgress(ids);
    String id;
    try (Connection c = DriverManager.getConnection(server.url(), server.properties())) {
      if (stored != null && stored.publication() != null) {
        refuseUnpublishedBy(c, stored.publication(), ids);
      }
      if (primaryUrl == null || !inRecovery(c)) {
        if (primaryUrl != null) {
          err.println(
              "pgcdc: --url is a primary (not in recovery): the request is written there, and"
                  + " --primary-url is not used");
          err.flush();
        }
        id = SnapshotRequests.request(c, slot, ids);
      } else {
        try (Connection p = DriverManager.getConnection(primaryUrl, server.properties())) {
          id = SnapshotRequests.request(p, c, slot, ids);
        } catch (SQLException e) {
          throw ServerFailures.classify(
              "cannot write the snapshot request into the WAL at the primary (--primary-url) "
                  + PgErrors.redact(primaryUrl),
              e,
              "GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text, boolean) TO"
                  + " the role on PostgreSQL 17+, pg_logical_emit_message(boolean, text, text) on"
                  + " 14-16");
        }
      }
    } catch (SQLException e) {
      throw ServerFailures.classify(
          "cannot write the snapshot request into the WAL at " + server.redactedUrl(),
          e,
          "GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text, boolean) TO the"
              + " role on PostgreSQL 17+, pg_logical_emit_message(boolean, text, text) on 14-16");
    }
    out.println(
        "requested a snapshot of "
            + ids
            + " from the stream of slot "
            + slot
            + ": snapshot id "
            + id
            + " (its rows carry \"snapshot\":{\"id\":\""
            + id
            + "\",...}); it starts once that stream reads the request, if it runs with"
            + " --snapshot on-request");
    out.flush();
    return 0;
  }

  /**
   * Refuses the tables whose snapshot the slot's stored checkpoint shows in progress. A {@code
   * file:} store is read without opening it (the running stream holds its lock); other stores are
   * opened as a consumer opens them.
   */
  private CdcCheckpoint refuseTablesInProgress(List<TableId> ids) throws Exception {
    Path directory = StoreUris.fileStoreDirectory(store);
    CdcCheckpoint stored;
    String location;
    if (directory != null) {
      stored = CheckpointCommand.readFileCheckpoint(directory, store, slot).orElse(null);
      location = directory.toUri().toString();
    } else {
      CheckpointCommand.Show.requireExistingPath(store);
      try (CdcCheckpointStore checkpoints = CheckpointStores.open(StoreUris.existingOnly(store))) {
        stored = checkpoints.load(slot).orElse(null);
        location = checkpoints.location();
      }
    }
    if (stored == null) {
      return null;
    }
    List<TableId> busy = new ArrayList<>();
    for (TableId t : ids) {
      if (stored.snapshot().table(t) != null) {
        busy.add(t);
      }
    }
    if (!busy.isEmpty()) {
      throw new CdcException(
          "a snapshot of "
              + busy
              + " is in progress already for slot "
              + slot
              + " ("
              + location
              + "); it continues, nothing was requested");
    }
    return stored;
  }

  /**
   * Refuses the tables the stream's own publication (the one its stored checkpoint records) does
   * not publish: that stream would ignore the request (another publication publishing them is not
   * enough).
   */
  private void refuseUnpublishedBy(Connection c, String publication, List<TableId> ids)
      throws SQLException {
    List<TableId> missing = new ArrayList<>();
    try (java.sql.PreparedStatement ps =
        c.prepareStatement(
            "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = ?"
                + " AND schemaname = ? AND tablename = ?)")) {
      for (TableId t : ids) {
        ps.setString(1, publication);
        ps.setString(2, t.schema());
        ps.setString(3, t.table());
        try (java.sql.ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1)) {
            missing.add(t);
          }
        }
      }
    }
    if (!missing.isEmpty()) {
      throw new io.datum.cdc.CdcConfigurationException(
          "publication \""
              + publication
              + "\", which the stream of slot "
              + slot
              + " reads (its stored checkpoint says so), does not publish "
              + missing
              + ": that stream would ignore the request; nothing was requested (ALTER PUBLICATION"
              + " \""
              + publication
              + "\" ADD TABLE ..., then ask again)");
    }
  }
}
