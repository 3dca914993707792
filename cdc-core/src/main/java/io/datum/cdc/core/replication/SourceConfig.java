package io.datum.cdc.core.replication;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.snapshot.SnapshotSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * The validated settings of one source, built by {@code PgCdcSource.Builder}.
 *
 * @param jdbcUrl the JDBC URL, {@code jdbc:postgresql://host:port/database}
 * @param properties connection properties (user, password, ...); copied by the builder
 * @param slot the replication slot
 * @param publication the publication
 * @param store the checkpoint store
 * @param createSlot create the slot if missing
 * @param createPublication create the publication if missing
 * @param publicationTables tables for a created publication; empty means all tables
 * @param handoffCapacity events the hand-off to the handler holds, at least 1
 * @param statusInterval longest time between two Standby Status Updates
 * @param stopTimeout how long {@code stop()} waits for the threads
 * @param trustSlotPosition resume at the slot's position when it is after the stored watermark
 * @param reconnectAttempts connection attempts after a connection loss before failing; 0: none
 * @param reconnectInitialBackoff the wait before the first attempt (halved by jitter at most)
 * @param reconnectMaxBackoff the longest wait between two attempts
 * @param durableEachAcknowledgement store a checkpoint before every acknowledgement returns
 * @param messages ask pgoutput for logical decoding messages (PostgreSQL 14+)
 * @param slotWait how long start waits for a slot active for another process; zero: fail at once
 * @param protocolVersion pgoutput protocol version 1 to 4, or 0 for the highest the server has
 * @param streaming the pgoutput {@code streaming} option: {@code off}, {@code on} or {@code
 *     parallel}, not null
 * @param twoPhase ask for two-phase decoding (PostgreSQL 15+)
 * @param binary ask for binary tuple values (PostgreSQL 14+)
 * @param origin the pgoutput {@code origin} option, {@code any} or {@code none} (PostgreSQL 16+),
 *     or null to not send it
 * @param memoryBudget bytes of buffered changes held in memory before a transaction spills
 * @param spillDirectory where spill files are created
 * @param decodeErrors what a column value that does not decode does: {@code stop}, {@code raw} or
 *     {@code skip}, not null
 * @param allowClusterChange accept a server whose system identifier, database or timeline does not
 *     continue the stored checkpoint's (logged at WARN) instead of failing
 * @param slotCreationTimeout how long creating the slot waits for older transactions; zero: no
 *     limit
 * @param failoverSlot create the slot with {@code failover} (PostgreSQL 17+) and require an
 *     existing slot to have it
 * @param allowPublicationChange accept a stored checkpoint written streaming another publication
 *     (logged at WARN) instead of failing
 * @param snapshot when and how to snapshot, not null
 * @param confirmedFlushLimit caps the position confirmed to PostgreSQL; null for none
 */
public record SourceConfig(
    String jdbcUrl,
    Properties properties,
    String slot,
    String publication,
    CdcCheckpointStore store,
    boolean createSlot,
    boolean createPublication,
    List<String> publicationTables,
    int handoffCapacity,
    Duration statusInterval,
    Duration stopTimeout,
    boolean trustSlotPosition,
    int reconnectAttempts,
    Duration reconnectInitialBackoff,
    Duration reconnectMaxBackoff,
    boolean durableEachAcknowledgement,
    boolean messages,
    Duration slotWait,
    int protocolVersion,
    String streaming,
    boolean twoPhase,
    boolean binary,
    String origin,
    long memoryBudget,
    Path spillDirectory,
    String decodeErrors,
    boolean allowClusterChange,
    Duration slotCreationTimeout,
    boolean failoverSlot,
    boolean allowPublicationChange,
    SnapshotSettings snapshot,
    Supplier<PgLsn> confirmedFlushLimit) {}
