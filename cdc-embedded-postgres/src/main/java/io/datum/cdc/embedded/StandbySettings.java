package io.datum.cdc.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * What {@link EmbeddedPostgresServer#createStandby(String)} sets on a primary for its standbys, and
 * undoes when a standby is closed: the names in {@code synchronized_standby_slots} (PostgreSQL 17+,
 * a {@code GUC_LIST_INPUT} setting changed with {@code ALTER SYSTEM} and a reload; docs 19.6.1) and
 * the standbys' physical slots. Polls the server where it must wait for it (a reload, a walsender
 * exiting): there is nothing else to wait on.
 */
final class StandbySettings {

  private static final long POLL_NANOS = 10_000_000L;

  private StandbySettings() {}

  /**
   * Adds a slot name to a primary's {@code synchronized_standby_slots}, unless it is there.
   *
   * @param primary the running primary, 17+; not {@code null}
   * @param slot the physical slot's name, {@code [a-z0-9_]{1,63}}
   * @param timeout how long the reload may take to be seen
   * @throws SQLException if the server refuses
   * @throws IllegalStateException if a new session does not see the new value within the timeout
   */
  static void add(EmbeddedPostgresServer primary, String slot, Duration timeout)
      throws SQLException {
    List<String> names = names(primary);
    if (!names.contains(slot)) {
      names.add(slot);
      set(primary, names, timeout);
    }
  }

  /**
   * Undoes what {@code createStandby} did on a primary for a standby that is gone: its name out of
   * {@code synchronized_standby_slots} (17+), its physical slot dropped once its walsender has
   * exited.
   *
   * @param primary the running primary; not {@code null}
   * @param slot the standby's physical slot, {@code [a-z0-9_]{1,63}}
   * @param slotTimeout how long the slot may stay active
   * @param reloadTimeout how long the reload may take to be seen
   * @throws SQLException if the server refuses
   * @throws IllegalStateException if the slot is still active, or the reload is not seen, in time
   */
  static void forget(
      EmbeddedPostgresServer primary, String slot, Duration slotTimeout, Duration reloadTimeout)
      throws SQLException {
    if (primary.majorVersion() >= 17) {
      List<String> names = names(primary);
      if (names.remove(slot)) {
        set(primary, names, reloadTimeout);
      }
    }
    long deadline = System.nanoTime() + slotTimeout.toNanos();
    String query =
        "SELECT coalesce((SELECT active::text FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "'), 'gone')";
    for (String state = primary.queryString(query);
        !state.equals("gone");
        state = primary.queryString(query)) {
      if (state.equals("false")) {
        primary.execute("SELECT pg_drop_replication_slot('" + slot + "')");
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the physical slot " + slot + " of " + primary + " is still active");
      }
      LockSupport.parkNanos(POLL_NANOS); // the closed standby's walsender exits
    }
  }

  /**
   * Removes a setting's lines from a copied {@code postgresql.auto.conf}, if there is one.
   *
   * @param autoConf the file; not {@code null}
   * @param name the setting's name
   * @throws IOException if the file cannot be read or written
   */
  static void dropSetting(Path autoConf, String name) throws IOException {
    if (!Files.exists(autoConf)) {
      return;
    }
    List<String> kept = new ArrayList<>();
    for (String line : Files.readAllLines(autoConf, StandardCharsets.UTF_8)) {
      String setting = line.strip();
      if (!setting.startsWith(name + " ") && !setting.startsWith(name + "=")) {
        kept.add(line);
      }
    }
    Files.write(autoConf, kept, StandardCharsets.UTF_8);
  }

  /** The names in {@code synchronized_standby_slots}, in order; a new mutable list. */
  private static List<String> names(EmbeddedPostgresServer primary) throws SQLException {
    List<String> names = new ArrayList<>();
    for (String name : primary.queryString("SHOW synchronized_standby_slots").split(",")) {
      if (!name.isBlank()) {
        names.add(name.strip());
      }
    }
    return names;
  }

  /**
   * Sets {@code synchronized_standby_slots} with ALTER SYSTEM and reloads; waits until a new
   * session sees it ({@code pg_reload_conf()} only signals the postmaster, which signals the
   * others).
   */
  private static void set(EmbeddedPostgresServer primary, List<String> names, Duration timeout)
      throws SQLException {
    String value = String.join(",", names);
    // a GUC_LIST_INPUT setting takes its list as one string; the names are [a-z0-9_]
    primary.execute(
        names.isEmpty()
            ? "ALTER SYSTEM RESET synchronized_standby_slots"
            : "ALTER SYSTEM SET synchronized_standby_slots = '" + value + "'",
        "SELECT pg_reload_conf()");
    long deadline = System.nanoTime() + timeout.toNanos();
    String seen;
    while (!value.equals(seen = primary.queryString("SHOW synchronized_standby_slots"))) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "synchronized_standby_slots of "
                + primary
                + " is '"
                + seen
                + "', not '"
                + value
                + "', after a reload");
      }
      LockSupport.parkNanos(POLL_NANOS);
    }
  }
}
