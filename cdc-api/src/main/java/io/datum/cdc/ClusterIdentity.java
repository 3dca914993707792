package io.datum.cdc;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Which PostgreSQL cluster, timeline and database a checkpoint's positions belong to, as the
 * walsender's {@code IDENTIFY_SYSTEM} command reports them (PostgreSQL docs, 55.4 Streaming
 * Replication Protocol, {@code IDENTIFY_SYSTEM}: {@code systemid}, {@code timeline}, {@code
 * dbname}).
 *
 * <p>An LSN means something only within one cluster's WAL: two clusters (or a cluster and a copy
 * made by {@code pg_upgrade} or {@code initdb}) have unrelated WAL, so a watermark carried from one
 * to the other would silently skip the other's changes up to it. The system identifier is chosen by
 * {@code initdb} and kept by physical copies (base backups, standbys), so a promoted standby has
 * its primary's system identifier and a new timeline descending from the primary's.
 *
 * @param systemIdentifier the cluster's system identifier (an unsigned 64-bit number, {@code
 *     pg_control_system().system_identifier}); compare with {@link #systemIdentifierText()}
 * @param timeline the timeline the server was on, at least 1
 * @param database the database of the replication connection (the slot's database); not empty, at
 *     most 63 UTF-8 bytes (NAMEDATALEN - 1)
 */
public record ClusterIdentity(long systemIdentifier, int timeline, String database) {

  /** The longest database name PostgreSQL accepts, in bytes (NAMEDATALEN - 1). */
  public static final int MAX_DATABASE_BYTES = 63;

  /**
   * Validates the fields.
   *
   * @throws NullPointerException if {@code database} is null
   * @throws IllegalArgumentException if {@code timeline} is below 1 or {@code database} is empty or
   *     longer than {@link #MAX_DATABASE_BYTES} UTF-8 bytes
   */
  public ClusterIdentity {
    Objects.requireNonNull(database, "database");
    if (timeline < 1) {
      throw new IllegalArgumentException("timeline must be at least 1, was " + timeline);
    }
    int bytes = database.getBytes(StandardCharsets.UTF_8).length;
    if (bytes == 0 || bytes > MAX_DATABASE_BYTES) {
      throw new IllegalArgumentException(
          "database name must take 1 to " + MAX_DATABASE_BYTES + " bytes, took " + bytes);
    }
  }

  /** Returns the system identifier as PostgreSQL prints it: unsigned decimal. */
  public String systemIdentifierText() {
    return Long.toUnsignedString(systemIdentifier);
  }

  /**
   * Returns this identity on another timeline of the same cluster and database.
   *
   * @param newTimeline the timeline, at least 1
   * @return a new identity
   * @throws IllegalArgumentException if {@code newTimeline} is below 1
   */
  public ClusterIdentity onTimeline(int newTimeline) {
    return new ClusterIdentity(systemIdentifier, newTimeline, database);
  }

  /**
   * Returns whether {@code other} is the same cluster and database, on any timeline.
   *
   * @param other another identity, not null
   * @return true if the system identifiers and databases are equal
   */
  public boolean sameClusterAndDatabase(ClusterIdentity other) {
    return systemIdentifier == other.systemIdentifier && database.equals(other.database);
  }

  /** Returns {@code system <id> timeline <n> database "<name>"}. */
  @Override
  public String toString() {
    return "system "
        + systemIdentifierText()
        + " timeline "
        + timeline
        + " database \""
        + database
        + '"';
  }
}
