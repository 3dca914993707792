package io.datum.cdc.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/**
 * Makes a physical standby of a running server: {@link
 * EmbeddedPostgresServer#createStandby(String)}, whose Javadoc says what is configured where. The
 * parts: {@link BaseBackup} copies the data directory, {@link StandbySettings} keeps the primary's
 * {@code synchronized_standby_slots}.
 *
 * <p>Stateless; thread-safe.
 */
final class Standbys {

  private Standbys() {}

  /**
   * Creates, starts and returns a standby of {@code primary}, as {@link
   * EmbeddedPostgresServer#createStandby(String)} describes.
   *
   * @param primary the running server to copy and follow; not {@code null}
   * @param physicalSlot the physical slot's name; not {@code null}
   * @param overrides settings of the standby that replace the primary's and the defaults above; not
   *     {@code null}
   * @return the running standby; never {@code null}
   * @throws IllegalArgumentException if the slot name is not valid
   * @throws IllegalStateException as {@link EmbeddedPostgresServer#createStandby(String)}
   * @throws SQLException as {@link EmbeddedPostgresServer#createStandby(String)}
   * @throws UncheckedIOException as {@link EmbeddedPostgresServer#createStandby(String)}
   */
  static EmbeddedPostgresServer create(
      EmbeddedPostgresServer primary, String physicalSlot, java.util.Map<String, String> overrides)
      throws SQLException {
    Objects.requireNonNull(physicalSlot, "physicalSlot");
    if (!physicalSlot.matches("[a-z0-9_]{1,63}")) {
      throw new IllegalArgumentException(
          "not a replication slot name ([a-z0-9_]{1,63}): \"" + physicalSlot + '"');
    }
    if (!primary.isRunning()) {
      throw new IllegalStateException(
          "a standby is made from a running server; start " + primary + " first");
    }
    if (primary.majorVersion() >= 17
        && primary.settings().containsKey("synchronized_standby_slots")) {
      throw new IllegalStateException(
          "synchronized_standby_slots was given to the builder of "
              + primary
              + " (-c on the command line), which ALTER SYSTEM cannot override: leave it out, and"
              + " createStandby names each standby's slot there");
    }
    EmbeddedPostgresServer.Builder standbyBuilder =
        EmbeddedPostgresServer.builder()
            .majorVersion(primary.majorVersion())
            .startupTimeout(primary.startupTimeout())
            .shutdownTimeout(primary.shutdownTimeout())
            .settings(primary.settings());
    standbyBuilder
        .setting(
            "primary_conninfo",
            "host="
                + EmbeddedPostgresServer.HOST
                + " port="
                + primary.port()
                + " user="
                + EmbeddedPostgresServer.USER
                + " dbname="
                + EmbeddedPostgresServer.DEFAULT_DATABASE
                + " application_name="
                + physicalSlot)
        .setting("primary_slot_name", physicalSlot)
        .setting("hot_standby_feedback", "on");
    if (primary.majorVersion() >= 17) {
      standbyBuilder.setting("sync_replication_slots", "on");
    }
    standbyBuilder.settings(overrides);
    EmbeddedPostgresServer standby = standbyBuilder.build();
    try {
      try (Connection connection = primary.getConnection()) {
        try (var ps =
            connection.prepareStatement(
                "SELECT pg_create_physical_replication_slot(?, true) WHERE NOT EXISTS"
                    + " (SELECT 1 FROM pg_replication_slots WHERE slot_name = ?)")) {
          ps.setString(1, physicalSlot);
          ps.setString(2, physicalSlot);
          ps.executeQuery().close();
        }
        standby.follow(primary, physicalSlot); // from here on, closing it drops the slot again
        BaseBackup.copy(
            connection, primary.majorVersion(), primary.dataDirectory(), standby.dataDirectory());
        Files.writeString(standby.dataDirectory().resolve("standby.signal"), "");
        StandbySettings.dropSetting(
            standby.dataDirectory().resolve("postgresql.auto.conf"), "synchronized_standby_slots");
        standby.start();
        if (primary.majorVersion() >= 17) {
          StandbySettings.add(primary, physicalSlot, primary.startupTimeout());
        }
      }
      return standby;
    } catch (IOException e) {
      standby.close();
      throw new UncheckedIOException("cannot create the standby's directory " + standby, e);
    } catch (SQLException | RuntimeException e) {
      standby.close();
      throw e;
    }
  }
}
