package io.datum.cdc.core.delivery;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.event.ChangeEvent;
import java.util.List;

/**
 * The producer beside the stream (a source's snapshots), as the replication thread drives it. The
 * stream is the one producer that owns a connection's life: it asks its peer what the stream must
 * carry and whether a new slot is to export its snapshot, tells it when a connection opens, lets it
 * read at that exported snapshot before streaming starts, and polls it between messages. Every
 * stream event passes the peer once ({@link Merge.StreamObserver}); its read rows go through the
 * same {@link Merge}. The stream knows nothing else of what the peer produces.
 *
 * <p>Every method is called on the replication thread, except {@link #opened} (on the caller of
 * {@code start} for the first connection, on the replication thread at a reconnect) and the three
 * questions the preflight asks (on the caller of {@code start}).
 */
public interface PeerProducer extends Merge.StreamObserver {

  /**
   * What a session of the stream (one replication connection) is, when it opens.
   *
   * @param types the type catalog the stream decodes with, or null before PostgreSQL 14
   * @param timeZone the walsender session's {@code TimeZone} (a {@code GUC_REPORT} parameter from
   *     the server's ParameterStatus), in which the stream's {@code timestamptz} texts are written;
   *     null if the server did not report it
   * @param serverVersionNum the server's {@code server_version_num}
   * @param start the position streaming starts at (the durable watermark)
   * @param reconnect true at a reconnect after a connection loss, false at the source's start
   * @param exportedSnapshot true if the slot is being created with an exported snapshot: {@link
   *     #readExported} runs before streaming starts
   */
  record Session(
      PgTypeCatalog types,
      String timeZone,
      int serverVersionNum,
      PgLsn start,
      boolean reconnect,
      boolean exportedSnapshot) {}

  /** Hands off read rows in order, waiting for room as long as it takes. */
  @FunctionalInterface
  interface Delivery {
    /**
     * @param events the events, in order
     * @throws InterruptedException if the source is stopping before all were handed off
     */
    void deliver(List<? extends ChangeEvent> events) throws InterruptedException;
  }

  /**
   * Returns true if the stream must carry logical decoding messages for this producer (pgoutput's
   * {@code messages} option), whether or not the source asked for them.
   */
  boolean needsMessages();

  /**
   * Checks the server before anything is created on it.
   *
   * @param serverVersionNum the server's {@code server_version_num}
   * @throws CdcConfigurationException naming the option and the version it needs, if this producer
   *     cannot work with the server
   */
  void checkServer(int serverVersionNum);

  /**
   * Returns true if a slot the source creates is to export its snapshot for this producer ({@code
   * CREATE_REPLICATION_SLOT ... (SNAPSHOT 'export')}): streaming then starts only after {@link
   * #readExported} returned.
   */
  boolean wantsExportedSnapshot();

  /**
   * A connection of the stream opened and its types are resolved: read as the stream of this
   * connection decodes.
   *
   * @param session the session, not null
   * @throws CdcException if the producer cannot start with it (a configuration it refuses, or a
   *     catalog query that failed); the connection is then closed
   */
  void opened(Session session);

  /**
   * Reads at a new slot's exported snapshot, before streaming starts.
   *
   * @param snapshotName the exported snapshot's name, valid until the replication connection's next
   *     command
   * @param consistentPoint the slot's consistent point
   * @param delivery where the read rows go
   * @return true if streaming is to follow; false if the source ends once {@link #done()} is true
   *     (the slot stays at its consistent point)
   * @throws InterruptedException if the source is stopping
   * @throws CdcException if reading fails
   */
  boolean readExported(String snapshotName, PgLsn consistentPoint, Delivery delivery)
      throws InterruptedException;

  /** Streaming started on the connection last {@link #opened}. */
  void streamStarted();

  /**
   * Polled between messages.
   *
   * @return true once the producer's work is the source's whole work and is done (its progress
   *     stored): the stream then stops
   * @throws CdcException the producer's failure, if it failed for good
   */
  boolean done();

  /** The hand-off was dropped at a reconnect: what was in flight is produced again. */
  void connectionLost();
}
