package io.datum.cdc.cli;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.SlotNames;
import io.datum.cdc.cli.common.ServerFailures;
import io.datum.cdc.cli.common.ServerOptions;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code pgcdc slot}: operator commands on replication slots. */
@Command(
    name = "slot",
    mixinStandardHelpOptions = true,
    description = "Manage replication slots.",
    subcommands = {SlotCommand.Drop.class})
final class SlotCommand {

  /**
   * {@code pgcdc slot drop --url URL --slot NAME --yes [--force]}: drops a replication slot, which
   * releases the WAL it retains. The changes it had not confirmed are gone for good; a checkpoint
   * of the slot in a store stays and makes a later {@code --create-slot} refuse until it is
   * deleted.
   */
  @Command(
      name = "drop",
      mixinStandardHelpOptions = true,
      description =
          "Drop a replication slot (releases its WAL; its unconfirmed changes are gone for good).")
  static final class Drop implements Callable<Integer> {

    @Mixin ServerOptions server;

    @Option(names = "--slot", required = true, description = "replication slot")
    String slot;

    @Option(
        names = "--force",
        description = "terminate the process streaming from the slot first (default: refuse)")
    boolean force;

    @Option(names = "--yes", description = "confirm the drop (required)")
    boolean yes;

    @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
    boolean verbose;

    PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
      SlotNames.requireValid(slot);
      if (!yes) {
        throw new CdcConfigurationException(
            "slot drop needs --yes: the changes slot \""
                + slot
                + "\" has not confirmed are then gone for good");
      }
      String where = server.redactedUrl();
      try (Connection c = DriverManager.getConnection(server.url(), server.properties())) {
        Integer activePid = activePid(c);
        if (activePid != null) {
          if (!force) {
            throw new CdcException(
                "replication slot \""
                    + slot
                    + "\" is active for PID "
                    + activePid
                    + "; stop that consumer first, or pass --force to terminate it");
          }
          try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
            ps.setInt(1, activePid);
            ps.executeQuery().close();
          }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
          ps.setString(1, slot);
          ps.executeQuery().close();
        }
      } catch (SQLException e) {
        if ("42704".equals(e.getSQLState())) {
          throw new CdcReplicationException(
              CdcReplicationException.Reason.SLOT_MISSING,
              "replication slot \"" + slot + "\" does not exist at " + where,
              e);
        }
        if ("55006".equals(e.getSQLState())) {
          throw new CdcException(
              "replication slot \""
                  + slot
                  + "\" became active again (a consumer reconnected); stop it, then drop again");
        }
        throw ServerFailures.classify(
            "cannot drop slot \"" + slot + "\" at " + where,
            e,
            "dropping a slot needs the REPLICATION attribute or superuser (ALTER ROLE ... WITH"
                + " REPLICATION), and --force ending another role's consumer needs"
                + " pg_signal_backend (GRANT pg_signal_backend TO ...)");
      }
      out.println(
          "dropped replication slot "
              + slot
              + "; a checkpoint of it in a store stays (pgcdc checkpoint delete --store URI"
              + " --slot "
              + slot
              + " --yes) and makes --create-slot refuse until deleted");
      out.flush();
      return 0;
    }

    private Integer activePid(Connection c) throws SQLException {
      try (PreparedStatement ps =
          c.prepareStatement("SELECT active_pid FROM pg_replication_slots WHERE slot_name = ?")) {
        ps.setString(1, slot);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return null; // the drop reports it
          }
          int pid = rs.getInt(1);
          return rs.wasNull() ? null : pid;
        }
      }
    }
  }
}
