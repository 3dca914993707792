package io.datum.cdc.core.replication;

import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.CdcReplicationException.Reason;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.errors.PgErrors;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Identifies the server a source connects to and compares it with the cluster its stored checkpoint
 * was written for, so that a store reused against another cluster (whose WAL has unrelated
 * positions) fails loudly instead of skipping that cluster's changes up to the watermark.
 *
 * <p>{@code IDENTIFY_SYSTEM} gives the system identifier, the timeline and the database; {@code
 * TIMELINE_HISTORY} gives a timeline's history file: one line per ancestor timeline, {@code
 * parentTLI <tab> switchpoint <tab> reason}, where the switchpoint is the LSN at which the parent
 * timeline ended (PostgreSQL docs, 55.4 Streaming Replication Protocol; server source, timeline.c,
 * {@code readTimeLineHistory}). A promoted standby keeps the system identifier and moves to a new
 * timeline whose history names the old one.
 */
final class ClusterCheck {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterCheck.class);

  /**
   * A promotion between the stored checkpoint and the server: the server runs on a later timeline
   * that descends from the stored one.
   *
   * @param from the stored timeline
   * @param to the server's timeline
   * @param switchpoint where timeline {@code from} ended, per the server's history file
   */
  record TimelineChange(int from, int to, PgLsn switchpoint) {}

  private ClusterCheck() {}

  /**
   * Runs {@code IDENTIFY_SYSTEM} on a replication connection.
   *
   * @param replication a connection opened with {@code replication=database}
   * @return the server's identity
   * @throws SQLException if the command fails
   */
  static ClusterIdentity identify(Connection replication) throws SQLException {
    try (Statement st = replication.createStatement();
        ResultSet rs = st.executeQuery("IDENTIFY_SYSTEM")) {
      if (!rs.next()) {
        throw new SQLException("IDENTIFY_SYSTEM returned no row");
      }
      String database = rs.getString("dbname");
      if (database == null) {
        throw new SQLException(
            "IDENTIFY_SYSTEM names no database: not a logical replication connection");
      }
      return new ClusterIdentity(
          Long.parseUnsignedLong(rs.getString("systemid")), rs.getInt("timeline"), database);
    }
  }

  /**
   * Returns where timeline {@code ancestor} ended according to timeline {@code timeline}'s history
   * file, or null if it is not an ancestor.
   *
   * @param replication a replication connection
   * @param timeline the server's timeline, above 1
   * @param ancestor the timeline looked for
   * @return the switchpoint, or null
   * @throws SQLException if {@code TIMELINE_HISTORY} fails
   */
  static PgLsn switchpoint(Connection replication, int timeline, int ancestor) throws SQLException {
    String content;
    try (Statement st = replication.createStatement();
        ResultSet rs = st.executeQuery("TIMELINE_HISTORY " + timeline)) {
      if (!rs.next()) {
        throw new SQLException("TIMELINE_HISTORY " + timeline + " returned no row");
      }
      // content is declared bytea but sent as the file's raw text (walsender.c,
      // SendTimeLineHistory), which getString returns as is
      content = rs.getString("content");
    }
    return switchpoint(content, ancestor);
  }

  /**
   * Parses a timeline history file.
   *
   * @param history the file's text
   * @param ancestor the timeline looked for
   * @return the LSN where {@code ancestor} ended, or null if the file does not name it
   * @throws SQLException if a line is malformed
   */
  static PgLsn switchpoint(String history, int ancestor) throws SQLException {
    for (String line : history.split("\n")) {
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("#")) {
        continue;
      }
      String[] fields = trimmed.split("\\s+", 3);
      try {
        if (Integer.parseInt(fields[0]) == ancestor) {
          return PgLsn.parse(fields[1]);
        }
      } catch (RuntimeException e) {
        throw new SQLException("malformed timeline history line: " + line, e);
      }
    }
    return null;
  }

  /**
   * Whether the slot on this server is its own, neither absent nor a copy synchronized from a
   * primary's failover slot ({@code pg_replication_slots.synced}, PostgreSQL 17+): after a
   * promotion, such a slot was created on the server while it was a standby, so a source whose
   * watermark is past the switchpoint streamed it across the promotion.
   */
  private static boolean streamedThroughPromotion(Connection replication, String slot)
      throws SQLException {
    try (java.sql.PreparedStatement ps =
        replication.prepareStatement(
            "SELECT coalesce((to_jsonb(s) ->> 'synced')::boolean, false)"
                + " FROM pg_replication_slots s WHERE slot_name = ? AND slot_type = 'logical'")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && !rs.getBoolean(1);
      }
    }
  }

  /**
   * Compares the server with the stored identity.
   *
   * @param stored the identity the checkpoint carries (or the last server seen), or null if unknown
   * @param current the server's identity
   * @param watermark the stored watermark
   * @param replication a replication connection to the server, for its timeline history
   * @param config the source's settings: slot, URL, and whether a change is accepted
   * @return the timeline change if the server is on a later timeline that continues the stored one
   *     (a promoted standby), else null (same timeline, nothing stored, or a mismatch accepted by
   *     {@code allowClusterChange})
   * @throws CdcReplicationException with {@link Reason#CLUSTER_MISMATCH} or {@link
   *     Reason#TIMELINE_DIVERGED} naming both identities, unless {@code allowClusterChange}
   * @throws SQLException if the timeline history cannot be read
   */
  static TimelineChange verify(
      ClusterIdentity stored,
      ClusterIdentity current,
      PgLsn watermark,
      Connection replication,
      SourceConfiguration config)
      throws SQLException {
    String slot = config.slot();
    if (stored == null) {
      LOG.info("slot {}: checkpoints will name {}", slot, current);
      return null;
    }
    String where =
        "the checkpoint of slot \""
            + slot
            + "\" was written for "
            + stored
            + " at watermark "
            + watermark
            + ", but "
            + PgErrors.redact(config.jdbcUrl())
            + " is "
            + current;
    if (stored.systemIdentifier() == current.systemIdentifier()
        && !stored.database().equals(current.database())) {
      refuse(
          config,
          Reason.CLUSTER_MISMATCH,
          where
              + ": a logical slot belongs to one database, and this checkpoint's positions were"
              + " confirmed for the changes of database \""
              + stored.database()
              + "\". Connect to that database, or give this database a slot and checkpoint of its"
              + " own; if the database was renamed, allowClusterChange(true) /"
              + " pgcdc --allow-cluster-change accepts it");
      return null;
    }
    if (!stored.sameClusterAndDatabase(current)) {
      refuse(
          config,
          Reason.CLUSTER_MISMATCH,
          where
              + ": LSNs of another cluster are unrelated, so resuming would skip that cluster's"
              + " changes up to the watermark. Use this cluster's own checkpoint store, or delete"
              + " this slot's checkpoint to start afresh (pgcdc checkpoint delete); if the slot"
              + " really moved here (pg_upgrade with its slots), allowClusterChange(true) /"
              + " pgcdc --allow-cluster-change accepts it");
      return null;
    }
    if (current.timeline() == stored.timeline()) {
      return null;
    }
    if (current.timeline() < stored.timeline()) {
      refuse(
          config,
          Reason.TIMELINE_DIVERGED,
          where
              + ": the server is on an earlier timeline than the checkpoint (restored from an older"
              + " backup?), so changes acknowledged on timeline "
              + stored.timeline()
              + " may be missing or different here; allowClusterChange(true) /"
              + " pgcdc --allow-cluster-change accepts it");
      return null;
    }
    PgLsn ended = switchpoint(replication, current.timeline(), stored.timeline());
    if (ended == null) {
      refuse(
          config,
          Reason.TIMELINE_DIVERGED,
          where
              + ": timeline "
              + current.timeline()
              + " does not descend from timeline "
              + stored.timeline()
              + " (its history file does not name it); allowClusterChange(true) /"
              + " pgcdc --allow-cluster-change accepts it");
      return null;
    }
    if (watermark.isAfter(ended) && streamedThroughPromotion(replication, slot)) {
      // the slot here is the server's own (created on it while a standby; a base backup copies
      // no slot, and a failover slot's copy is synced): the source streamed it across the
      // promotion on a connection that stayed open, so the positions after the switchpoint are
      // this timeline's and were confirmed to this very server
      LOG.info(
          "slot {}: the server moved from timeline {} to {} (timeline {} ended at {}) while the"
              + " source streamed slot {} on it, a standby then: the watermark {} is on timeline {};"
              + " resuming",
          slot,
          stored.timeline(),
          current.timeline(),
          stored.timeline(),
          ended,
          slot,
          watermark,
          current.timeline());
      return new TimelineChange(stored.timeline(), current.timeline(), ended);
    }
    if (watermark.isAfter(ended)) {
      refuse(
          config,
          Reason.TIMELINE_DIVERGED,
          where
              + ": timeline "
              + stored.timeline()
              + " ended at "
              + ended
              + " on this server, before the watermark: changes acknowledged after "
              + ended
              + " never reached it (the standby was promoted before it received them; PostgreSQL"
              + " 17+ synchronized_standby_slots prevents this), and resuming would skip other"
              + " changes up to the watermark; allowClusterChange(true) /"
              + " pgcdc --allow-cluster-change accepts it");
      return null;
    }
    LOG.info(
        "slot {}: the server moved from timeline {} to {} (timeline {} ended at {}, at or after the"
            + " watermark {}): resuming",
        slot,
        stored.timeline(),
        current.timeline(),
        stored.timeline(),
        ended,
        watermark);
    return new TimelineChange(stored.timeline(), current.timeline(), ended);
  }

  /**
   * Compares the configured publication with the one the stored checkpoint was streamed with. A
   * slot's position moves over every change, published or not: changes of tables the stored
   * publication did not publish were never delivered, yet lie behind the watermark, so streaming
   * another publication from there would never deliver them (and switching back would skip the
   * changes the other one filtered out). Adding tables to the same publication is not a change. A
   * slot whose initial snapshot began (or ended: {@code initial-only}) has not streamed yet, but
   * its snapshot read only the stored publication's tables: another publication's other tables
   * would never have their rows delivered, so that is a change too.
   *
   * @param stored the stored checkpoint's publication, or null if unknown (accepted)
   * @param watermark the stored watermark
   * @param snapshotStored whether the stored checkpoint holds snapshot progress (a snapshot began
   *     or the initial one completed)
   * @param config the source's settings
   * @throws CdcReplicationException with {@link Reason#PUBLICATION_CHANGED} naming both, unless
   *     {@code allowPublicationChange}
   */
  static void verifyPublication(
      String stored, PgLsn watermark, boolean snapshotStored, SourceConfiguration config) {
    if (stored == null
        || stored.equals(config.publication())
        || (watermark.isZero() && !snapshotStored)) {
      return;
    }
    String what =
        watermark.isZero()
            ? "snapshotting publication \""
                + stored
                + "\", not \""
                + config.publication()
                + "\": its snapshot read only the tables \""
                + stored
                + "\" publishes, so the rows that tables only \""
                + config.publication()
                + "\" publishes held before it would never be delivered, nor their changes since"
                + " the snapshot"
            : "streaming publication \""
                + stored
                + "\", not \""
                + config.publication()
                + "\": its watermark "
                + watermark
                + " passed over the changes \""
                + stored
                + "\" did not publish, which \""
                + config.publication()
                + "\" may publish and would then never deliver";
    String message =
        "the checkpoint of slot \""
            + config.slot()
            + "\" in "
            + config.store().location()
            + " was written "
            + what
            + ". Stream \""
            + config.publication()
            + "\" from a slot of its own, or add its tables to \""
            + stored
            + "\" (ALTER PUBLICATION ... ADD TABLE); if skipping those changes is acceptable,"
            + " allowPublicationChange(true) / pgcdc --allow-publication-change";
    if (!config.get(SourceOptions.ALLOW_PUBLICATION_CHANGE)) {
      throw new CdcReplicationException(Reason.PUBLICATION_CHANGED, message);
    }
    LOG.warn("slot {}: accepted by allowPublicationChange: {}", config.slot(), message);
  }

  private static void refuse(SourceConfiguration config, Reason reason, String message) {
    if (!config.get(SourceOptions.ALLOW_CLUSTER_CHANGE)) {
      throw new CdcReplicationException(reason, message);
    }
    LOG.warn("slot {}: accepted by allowClusterChange: {}", config.slot(), message);
  }
}
