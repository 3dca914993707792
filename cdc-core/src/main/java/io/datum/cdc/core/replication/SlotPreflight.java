package io.datum.cdc.core.replication;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.CdcReplicationException.Reason;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.delivery.PeerProducer;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.server.ServerRole;
import io.datum.cdc.core.types.PgTypeCatalog;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.postgresql.PGProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * What a source checks, over an ordinary SQL connection, before it starts streaming: the server's
 * version (to negotiate pgoutput's options), the publication (created if configured), in binary
 * mode the column types of the published tables, the slot (created if configured and safe: never
 * when a stored watermark says changes would be skipped, never at a reconnect), that the slot uses
 * pgoutput, is not invalidated ({@code wal_status lost}) and is not held by another consumer
 * (waiting up to the configured slot wait), that its {@code confirmed_flush_lsn} is not after the
 * stored watermark, and that the stored watermark is not after the server's WAL (a store of another
 * cluster). With {@code failoverSlot}: that the server is PostgreSQL 17+, that the slot is created
 * as a failover slot and an existing one is one, and (a WARN) that {@code
 * synchronized_standby_slots} names a standby. After a promotion (the server continues the stored
 * timeline on a later one), a missing slot is reported as a slot the promoted standby did not have.
 * PostgreSQL docs, 53.19 {@code pg_replication_slots}, 47.2.3 Logical Replication Failover.
 */
final class SlotPreflight {

  private static final Logger LOG = LoggerFactory.getLogger(SlotPreflight.class);

  /** What the checks found: the negotiated pgoutput options and, in binary mode, the catalog. */
  /**
   * @param protocol the negotiated pgoutput options
   * @param types the type catalog, or null before PostgreSQL 14
   * @param createWithSnapshot the slot is missing and is to be created on the replication
   *     connection with an exported snapshot (for the peer producer), by the caller
   * @param serverVersion the server's {@code server_version_num}
   */
  record Outcome(
      PgOutputOptions protocol,
      PgTypeCatalog types,
      boolean createWithSnapshot,
      int serverVersion) {}

  private SlotPreflight() {}

  /**
   * Runs the checks.
   *
   * @param config the source's settings
   * @param coordinator the source's coordinator, for the stored watermark
   * @param reconnecting true at a reconnect: a missing slot is then never created (it was dropped:
   *     a new one would skip changes) and is reported as such
   * @param promotion the timeline change {@link ClusterCheck#verify} found since the stored
   *     checkpoint (a promoted standby), or null
   * @param stopRequested tells whether the source is stopping (ends the wait for a busy slot)
   * @param known the catalog of the source's previous connection (its types stay known), or null
   * @param peer the producer beside the stream: what the stream must carry for it, the server it
   *     needs, whether a new slot exports its snapshot for it
   * @param role the server's role, read again here; where the source writes
   * @return the negotiated options and the type catalog ({@code known} if given; null before
   *     PostgreSQL 14)
   * @throws io.datum.cdc.CdcException naming the slot, publication or server and the remedy, if a
   *     check fails or the server cannot be reached
   */
  static Outcome run(
      SourceConfiguration config,
      FeedbackCoordinator coordinator,
      boolean reconnecting,
      ClusterCheck.TimelineChange promotion,
      BooleanSupplier stopRequested,
      PgTypeCatalog known,
      PeerProducer peer,
      ServerRole role) {
    String slot = config.slot();
    PgOutputOptions protocol;
    PgTypeCatalog types = null;
    boolean createdPublication = false;
    boolean createWithSnapshot = false;
    int version = 0;
    try (Connection admin =
        DriverManager.getConnection(config.jdbcUrl(), adminProperties(config))) {
      SlotAdmin slots = new SlotAdmin(admin);
      try {
        int serverVersion = slots.serverVersionNum();
        version = serverVersion;
        boolean standby = role.identify(admin, serverVersion, !reconnecting);
        if (standby && config.get(SourceOptions.FAILOVER_SLOT)) {
          throw new CdcConfigurationException(
              "failoverSlot (pgcdc --failover-slot) makes a primary's slot survive a promotion,"
                  + " but "
                  + PgErrors.redact(config.jdbcUrl())
                  + " is a hot standby, where PostgreSQL creates no failover slot and its slot"
                  + " survives the standby's own promotion anyway; leave the option out");
        }
        peer.checkServer(serverVersion);
        protocol = PgOutputOptions.negotiate(config, serverVersion, peer.needsMessages());
        if (config.get(SourceOptions.FAILOVER_SLOT) && serverVersion < 170000) {
          throw new CdcConfigurationException(
              "failoverSlot (pgcdc --failover-slot) needs PostgreSQL 17 or later, which has"
                  + " failover slots; the server is "
                  + serverVersion
                  + " (server_version_num). Without it a promoted standby has no slot and the source"
                  + " stops with SLOT_MISSING; leave the option out on this server");
        }
        if (!slots.publicationExists(config.publication())) {
          if (!config.get(SourceOptions.CREATE_PUBLICATION)) {
            throw new CdcReplicationException(
                Reason.PUBLICATION_MISSING,
                "publication \""
                    + config.publication()
                    + "\" does not exist in "
                    + PgErrors.redact(config.jdbcUrl())
                    + "; create it (CREATE PUBLICATION ... FOR TABLE ...) or let the source create it"
                    + " (createPublication(true), pgcdc --create-publication)"
                    + (standby
                        ? "; this server is a hot standby: a publication is created on the"
                            + " primary, and one created there just now may not be replayed here"
                            + " yet (start again in a moment)"
                        : ""));
          }
          role.requireWrites(
              "creating publication \""
                  + config.publication()
                  + "\" (createPublication(true), pgcdc --create-publication)",
              "CREATE PUBLICATION runs on a primary only");
          try {
            createPublication(config, role, admin, stopRequested);
            createdPublication = true;
          } catch (SQLException e) {
            String state = e.getSQLState();
            if ("42P01".equals(state) || "3F000".equals(state)) {
              // undefined_table, invalid_schema_name (PostgreSQL docs, Appendix A): a name among
              // the tables to publish is wrong, which retrying cannot fix
              throw new CdcConfigurationException(
                  "cannot create publication \""
                      + config.publication()
                      + "\" for the tables "
                      + config.get(SourceOptions.PUBLICATION_TABLES)
                      + ": "
                      + e.getMessage()
                      + " [SQLSTATE "
                      + state
                      + "]: createPublication's tables (pgcdc --tables) name a table or schema"
                      + " that does not exist in "
                      + PgErrors.redact(config.jdbcUrl())
                      + "; correct the name (schema.table; an unqualified name is looked up on the"
                      + " role's search_path) or create the table first",
                  e);
            }
            throw PgErrors.map("cannot create publication \"" + config.publication() + '"', e);
          }
        } else if (config.get(SourceOptions.CREATE_PUBLICATION)) {
          // told to create it with these tables: an existing one without them would stream less
          slots.requirePublicationCovers(
              config.publication(), config.get(SourceOptions.PUBLICATION_TABLES));
        }
        // binary values of user-defined types, and arrays of them in text mode, need their kind,
        // which pgoutput does not send; one catalog per source keeps what it said across
        // reconnects.
        // Its query needs PostgreSQL 14 (typsubscript, rngmultitypid), as binary mode does: before
        // 14 (text mode only) the source runs without it and arrays of user types stay their text
        types = known;
        if (types == null && serverVersion >= 140000) {
          types =
              new PgTypeCatalog(
                  new PgTypeCatalog.ConnectionSource() {
                    @Override
                    public Connection open() throws SQLException {
                      return DriverManager.getConnection(config.jdbcUrl(), adminProperties(config));
                    }

                    @Override
                    public RuntimeException failure(String what, SQLException e) {
                      return PgErrors.map(what, e);
                    }
                  });
        }
        if (types != null) {
          types.preload(admin, config.publication());
        }
        SlotAdmin.SlotState state = slots.slot(slot);
        if (state == null) {
          boolean told =
              config.get(SourceOptions.CREATE_SLOT)
                  && config.get(SourceOptions.TRUST_SLOT_POSITION)
                  && !reconnecting;
          if (promotion != null && !coordinator.watermark().isZero() && !told) {
            throw missingAfterPromotion(config, coordinator.watermark(), promotion);
          }
          if (reconnecting) {
            // this process had the slot: advising to create one would make it skip changes
            throw new CdcReplicationException(
                Reason.SLOT_MISSING,
                "replication slot \""
                    + slot
                    + "\" was dropped while the source was reconnecting to it; the changes after"
                    + " the stored watermark "
                    + coordinator.watermark()
                    + " ("
                    + config.store().location()
                    + ") are gone with it, and a new slot would start after them. Find out what"
                    + " dropped it; only if that loss is acceptable, start again with a new slot"
                    + " (createSlot(true) and trustSlotPosition(true), pgcdc --create-slot"
                    + " --trust-slot-position))");
          }
          PgLsn stored = coordinator.watermark();
          if (!stored.isZero()
              && !(config.get(SourceOptions.CREATE_SLOT)
                  && config.get(SourceOptions.TRUST_SLOT_POSITION))) {
            // creating a new slot now would silently skip every change since the stored watermark
            throw new CdcReplicationException(
                Reason.SLOT_MISSING,
                "replication slot \""
                    + slot
                    + "\" does not exist, but "
                    + config.store().location()
                    + " holds its watermark "
                    + stored
                    + ": the slot was dropped, and a new one would start after the changes in"
                    + " between. Create it anyway only if that loss is acceptable (createSlot(true)"
                    + " and trustSlotPosition(true), pgcdc --create-slot --trust-slot-position), or"
                    + " start afresh without the checkpoint (pgcdc checkpoint delete --store URI"
                    + " --slot "
                    + slot
                    + " --yes)");
          }
          if (!config.get(SourceOptions.CREATE_SLOT)) {
            throw new CdcReplicationException(
                Reason.SLOT_MISSING,
                "replication slot \""
                    + slot
                    + "\" does not exist; create it with"
                    + " pg_create_logical_replication_slot('"
                    + slot
                    + "', 'pgoutput')"
                    + " or let the source create it (createSlot(true), pgcdc --create-slot)");
          }
          try {
            if (peer.wantsExportedSnapshot()) {
              createWithSnapshot = true; // on the replication connection, exporting its snapshot
            } else {
              role.creatingSlot(
                  slot,
                  admin,
                  stopRequested,
                  () -> {
                    slots.createSlot(
                        slot,
                        config.get(SourceOptions.FAILOVER_SLOT),
                        config.get(SourceOptions.SLOT_CREATION_TIMEOUT),
                        role);
                    return null;
                  });
            }
          } catch (SQLException e) {
            throw PgErrors.map("cannot create replication slot \"" + slot + '"', e);
          }
        } else {
          if (state.invalidation() != null) {
            throw invalidated(slot, state.invalidation(), standby);
          }
          if (standby && Boolean.TRUE.equals(state.synced())) {
            throw new CdcReplicationException(
                Reason.SLOT_INCOMPATIBLE,
                "replication slot \""
                    + slot
                    + "\" on the standby "
                    + PgErrors.redact(config.jdbcUrl())
                    + " is a copy the standby keeps of the primary's failover slot"
                    + " (pg_replication_slots.synced), which PostgreSQL does not decode from"
                    + " before a promotion; stream from the primary with it, or give the standby's"
                    + " source a slot of its own (another slot name, createSlot(true))");
          }
          if (!"pgoutput".equals(state.plugin())) {
            throw new CdcReplicationException(
                Reason.SLOT_INCOMPATIBLE,
                "replication slot \""
                    + slot
                    + (state.plugin() == null
                        ? "\" is a " + state.type() + " slot"
                        : "\" uses plugin " + state.plugin() + " (type " + state.type() + ")")
                    + "; datum-cdc needs a logical slot with pgoutput");
          }
          if (config.get(SourceOptions.FAILOVER_SLOT) && !Boolean.TRUE.equals(state.failover())) {
            throw new CdcReplicationException(
                Reason.SLOT_INCOMPATIBLE,
                "replication slot \""
                    + slot
                    + "\" is not a failover slot (pg_replication_slots.failover is false), but"
                    + " failoverSlot (pgcdc --failover-slot) asks for one: a standby would not"
                    + " keep it, and after a promotion the source would stop with SLOT_MISSING."
                    + " Make it one while no consumer streams from it, on a replication connection"
                    + " (psql \"dbname=... replication=database\"): ALTER_REPLICATION_SLOT "
                    + slot
                    + " (FAILOVER true); or leave the option out");
          }
          long waitUntil = System.nanoTime() + config.get(SourceOptions.WAIT_FOR_SLOT).toNanos();
          while (state != null
              && state.active()
              && System.nanoTime() < waitUntil
              && !stopRequested.getAsBoolean()) {
            // another consumer holds the slot: wait for it to let go, as configured
            LockSupport.parkNanos(SlotPreflight.class, TimeUnit.MILLISECONDS.toNanos(200));
            state = slots.slot(slot);
          }
          if (state == null) {
            throw new CdcReplicationException(
                Reason.SLOT_MISSING,
                "replication slot \"" + slot + "\" was dropped while waiting for it");
          }
          if (state.active()) {
            throw new CdcReplicationException(
                Reason.SLOT_ACTIVE,
                "replication slot \""
                    + slot
                    + "\" is active for PID "
                    + state.activePid()
                    + "; another consumer is streaming from it");
          }
          PgLsn watermark = coordinator.watermark();
          if (promotion != null && Boolean.TRUE.equals(state.synced())) {
            LOG.info(
                "slot {}: resuming on the promoted standby's copy of the slot (synchronized from the"
                    + " former primary; confirmed_flush_lsn {}, stored watermark {}: transactions"
                    + " between the two come again and are skipped)",
                slot,
                state.confirmedFlushLsn(),
                watermark);
          }
          if (!watermark.isZero() && state.confirmedFlushLsn().isAfter(watermark)) {
            // the source reports only stored watermarks, so someone else moved the slot (or dropped
            // and recreated it): transactions between the two positions would be skipped silently
            if (!config.get(SourceOptions.TRUST_SLOT_POSITION)) {
              throw new CdcReplicationException(
                  Reason.SLOT_AHEAD,
                  "replication slot \""
                      + slot
                      + "\" has confirmed_flush_lsn "
                      + state.confirmedFlushLsn()
                      + ", after the watermark "
                      + watermark
                      + " stored in "
                      + config.store().location()
                      + ": the slot was advanced, or"
                      + " dropped and recreated, while this consumer was down, and the changes in"
                      + " between cannot be delivered. Resume from the slot's position only if that"
                      + " loss is acceptable (trustSlotPosition(true), pgcdc --trust-slot-position)");
            }
            LOG.warn(
                "slot {}: confirmed_flush_lsn {} is after the stored watermark {}; trusting the"
                    + " slot as configured: changes in between are not delivered",
                slot,
                state.confirmedFlushLsn(),
                watermark);
          }
        }
        if (config.get(SourceOptions.FAILOVER_SLOT) && slots.synchronizedStandbySlots().isBlank()) {
          // at start; at a reconnect (perhaps to a promoted standby that has none yet) only DEBUG
          LOG.atLevel(reconnecting ? Level.DEBUG : Level.WARN)
              .log(
                  "slot {}: a failover slot, but synchronized_standby_slots is empty on {}: this"
                      + " source may receive and acknowledge changes a standby has not received yet,"
                      + " and after that standby's promotion it refuses to resume"
                      + " (TIMELINE_DIVERGED). Name the standbys' physical slots in"
                      + " synchronized_standby_slots (PostgreSQL docs, 47.2.3 Logical Replication"
                      + " Failover)",
                  slot,
                  PgErrors.redact(config.jdbcUrl()));
        }
        PgLsn stored = coordinator.watermark();
        PgLsn walEnd = slots.currentWalLsn();
        if (stored.isAfter(walEnd)) {
          // confirming it would make the server skip every change up to it, on this slot for good
          throw new CdcReplicationException(
              Reason.WATERMARK_AFTER_WAL,
              "the watermark "
                  + stored
                  + " stored in "
                  + config.store().location()
                  + " for slot \""
                  + slot
                  + "\" is after the server's current WAL position "
                  + walEnd
                  + ": the store"
                  + " belongs to another cluster, or the server was restored from an older backup."
                  + " Delete the slot's checkpoint from the store (for file:, the file "
                  + slot
                  + ".checkpoint in its directory) or use another store, to start from the slot's position");
        }
      } catch (SQLException | RuntimeException e) {
        if (createdPublication) {
          // a failed start leaves nothing behind: the publication this start created goes
          try (Connection writable = role.openWritable("datum-cdc " + slot)) {
            new SlotAdmin(writable).dropPublication(config.publication());
          } catch (SQLException dropping) {
            e.addSuppressed(dropping);
          }
        }
        throw e;
      }
    } catch (SQLException e) {
      throw PgErrors.map(
          "cannot check slot \""
              + slot
              + "\" and publication \""
              + config.publication()
              + "\" at "
              + PgErrors.redact(config.jdbcUrl()),
          e);
    }
    return new Outcome(protocol, types, createWithSnapshot, version);
  }

  /**
   * The error for an invalidated slot, naming PostgreSQL's reason ({@code invalidation_reason},
   * PostgreSQL docs 53.19; on 16 {@code conflicting} or {@code wal_status lost}) and the remedy.
   * The changes since the slot's position are gone with it in every case.
   *
   * @param slot the slot
   * @param reason {@code wal_removed}, {@code rows_removed}, {@code wal_level_insufficient}, {@code
   *     idle_timeout}, {@code conflict} (PostgreSQL 16: one of the two conflicts), or another the
   *     server names
   * @param standby whether the slot is on a hot standby
   */
  static CdcReplicationException invalidated(String slot, String reason, boolean standby) {
    String cause =
        switch (reason) {
          case "wal_removed" ->
              "PostgreSQL removed WAL it still needed (wal_status lost, e.g."
                  + " max_slot_wal_keep_size exceeded"
                  + (standby ? " on the standby" : "")
                  + ")";
          case "rows_removed" ->
              "the primary removed catalog rows the slot still needed (a conflict with recovery):"
                  + " on the standby set hot_standby_feedback = on and give it a physical"
                  + " replication slot on the primary (primary_slot_name), so that the primary"
                  + " keeps those rows";
          case "wal_level_insufficient" ->
              "the primary's wal_level was lowered below logical: set wal_level = logical on the"
                  + " primary again (a restart)";
          case "conflict" ->
              "of a conflict with recovery (pg_replication_slots.conflicting): the primary removed"
                  + " catalog rows the slot needed (on the standby set hot_standby_feedback = on"
                  + " with a physical replication slot on the primary, primary_slot_name), or its"
                  + " wal_level was lowered below logical";
          case "idle_timeout" ->
              "it was inactive longer than idle_replication_slot_timeout; raise that setting or"
                  + " keep a consumer streaming";
          default -> "of " + reason + " (pg_replication_slots.invalidation_reason)";
        };
    return new CdcReplicationException(
        Reason.SLOT_INVALIDATED,
        "replication slot \""
            + slot
            + "\" is invalidated (invalidation_reason "
            + reason
            + ") because "
            + cause
            + "; the changes since its position are gone. Drop it and create a new one, knowing"
            + " that those changes cannot be delivered");
  }

  /**
   * Creates the publication where the source writes; on a standby, on its primary, then waits until
   * the standby has replayed it (the stream reads the publication from the standby's catalog).
   */
  private static void createPublication(
      SourceConfiguration config, ServerRole role, Connection admin, BooleanSupplier stop)
      throws SQLException {
    if (!role.standby()) {
      new SlotAdmin(admin)
          .createPublication(config.publication(), config.get(SourceOptions.PUBLICATION_TABLES));
      return;
    }
    PgLsn written;
    try (Connection primary = role.openWritable("datum-cdc " + config.slot())) {
      new SlotAdmin(primary)
          .createPublication(config.publication(), config.get(SourceOptions.PUBLICATION_TABLES));
      written = ServerRole.flushedPosition(primary);
    }
    LOG.info(
        "slot {}: created publication {} on the primary; waiting for the standby to replay it ({})",
        config.slot(),
        config.publication(),
        written);
    role.awaitReplay(admin, written, stop, waiting -> {});
  }

  /**
   * The error for a slot missing on a server that is a promoted standby of the checkpoint's
   * cluster: the standby did not have the slot when it was promoted.
   */
  private static CdcReplicationException missingAfterPromotion(
      SourceConfiguration config, PgLsn watermark, ClusterCheck.TimelineChange promotion) {
    String slot = config.slot();
    return new CdcReplicationException(
        Reason.SLOT_MISSING,
        "replication slot \""
            + slot
            + "\" does not exist on "
            + PgErrors.redact(config.jdbcUrl())
            + ", a promoted standby: it moved from timeline "
            + promotion.from()
            + " to "
            + promotion.to()
            + " (timeline "
            + promotion.from()
            + " ended at "
            + promotion.switchpoint()
            + ") since the checkpoint in "
            + config.store().location()
            + " (watermark "
            + watermark
            + "), and the slot was not on the standby when it was promoted. "
            + (config.get(SourceOptions.FAILOVER_SLOT)
                ? "The slot is a failover slot, but the standby had not synchronized it (on the"
                    + " standby: sync_replication_slots = on, hot_standby_feedback = on,"
                    + " primary_slot_name, a dbname in primary_conninfo; before a planned"
                    + " switchover wait for pg_replication_slots.synced there)."
                : "Only failover slots survive a promotion (PostgreSQL 17+: failoverSlot(true),"
                    + " pgcdc --failover-slot, with sync_replication_slots = on on the standby).")
            + " A new slot here would start after the changes since the watermark, which would"
            + " be lost: only if that loss is acceptable, start with createSlot(true) and"
            + " trustSlotPosition(true) (pgcdc --create-slot --trust-slot-position)");
  }

  /** The admin connection's properties: the source's, with its own application_name. */
  static Properties adminProperties(SourceConfiguration config) {
    Properties p = new Properties();
    p.putAll(config.properties());
    PGProperty.APPLICATION_NAME.set(p, "datum-cdc admin " + config.slot());
    return p;
  }
}
