package io.datum.cdc.spring;

import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.config.DecodeErrorPolicy;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.core.config.OriginFilter;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.StreamingMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code datum.cdc.*} properties: one for every option of {@link
 * io.datum.cdc.core.PgCdcSource.Builder}, plus the checkpoint store, the lifecycle and the health
 * check. An option left unset keeps the builder's default.
 */
@ConfigurationProperties(prefix = "datum.cdc")
public class CdcProperties {

  /** Whether to auto-configure and run a source at all. */
  private boolean enabled = true;

  /** The JDBC URL of the database to stream, jdbc:postgresql://host:port/database. */
  private String jdbcUrl;

  /** The user to connect as; it needs the REPLICATION attribute. */
  private String user;

  /** The user's password. */
  private String password;

  /**
   * When jdbc-url is a hot standby (PostgreSQL 16+): its primary's JDBC URL, where the source
   * writes what a standby cannot (a publication it creates, online snapshot watermarks).
   */
  private String primaryJdbcUrl;

  /** Extra pgjdbc connection properties (sslmode, ApplicationName, ...). */
  private Map<String, String> connectionProperties = new LinkedHashMap<>();

  /** The logical replication slot, [a-z0-9_]{1,63}. */
  private String slot;

  /** The publication to stream. */
  private String publication;

  /** Whether to create the slot when it does not exist (the builder's default: false). */
  private Boolean createSlot;

  /** Whether to create the publication when it does not exist (the builder's default: false). */
  private Boolean createPublication;

  /**
   * The tables the created publication publishes (schema.table); empty for FOR ALL TABLES. Used
   * only with create-publication.
   */
  private List<String> publicationTables = new ArrayList<>();

  /** Events handed from the replication reader to the handler thread (the default: 1024). */
  private Integer handoffCapacity;

  /**
   * Threads that call the handler (the default: 1). With more, the events of one ordering unit
   * (handler-ordering) are handled in stream order and different units in parallel: the handler
   * bean must then be thread-safe.
   */
  private Integer handlerThreads;

  /**
   * With more than one handler thread, the unit handled in stream order: KEY (the default: a row,
   * by primary key or replica identity), TABLE, TRANSACTION or NONE.
   */
  private HandlerOrdering handlerOrdering;

  /** How often the position is reported to the server (the default: 1s). */
  private Duration statusInterval;

  /** How long stop() waits for the handler to drain (the default: 30s). */
  private Duration stopTimeout;

  /** Whether to start at the slot's position when the store holds no checkpoint. */
  private Boolean trustSlotPosition;

  /** Whether to accept a checkpoint written for another cluster. */
  private Boolean allowClusterChange;

  /** Whether to accept a checkpoint written for another publication. */
  private Boolean allowPublicationChange;

  /** Whether to create the slot as a failover slot (PostgreSQL 17+). */
  private Boolean failoverSlot;

  /** How many reconnection attempts in a row before the source fails (default: no limit). */
  private Integer reconnectAttempts;

  /** The first backoff between reconnection attempts (the default: 200ms). */
  private Duration reconnectInitialBackoff;

  /** The longest backoff between reconnection attempts (the default: 30s). */
  private Duration reconnectMaxBackoff;

  /** When an acknowledgement is stored: EVENT (the default) or TRANSACTION. */
  private AcknowledgementDurability acknowledgementDurability;

  /**
   * What to do with a column value that cannot be decoded: RAW (the default: deliver the event with
   * the value undecoded), STOP (fail the source) or SKIP (drop the whole change: it is
   * acknowledged, logged at WARN and counted in datum.cdc.events.skipped, and the handler never
   * sees it, so it is lost to the application).
   */
  private DecodeErrorPolicy onDecodeError;

  /** The snapshot modes: NEVER (the default), INITIAL, INITIAL_ONLY, ON_REQUEST. */
  private List<SnapshotMode> snapshotModes = new ArrayList<>();

  /** Connections that copy tables in parallel (the default: 1). */
  private Integer snapshotParallelism;

  /** Rows per snapshot chunk (the default: 8192). */
  private Integer snapshotChunkRows;

  /** Whether to deliver logical decoding messages (pg_logical_emit_message). */
  private Boolean messages;

  /** The pgoutput protocol version (1 to 4); unset picks the highest the options need. */
  private Integer protocolVersion;

  /** Streaming of large in-progress transactions: OFF (the default), ON or PARALLEL. */
  private StreamingMode streaming;

  /** Whether to decode prepared transactions (two-phase commit). */
  private Boolean twoPhase;

  /** Whether to ask pgoutput for binary values. */
  private Boolean binary;

  /** Which origins' changes to stream: ANY or NONE (unset: the server's default). */
  private OriginFilter origin;

  /** Memory for assembling transactions before they spill to disk, in bytes (default 64 MiB). */
  private Long memoryBudget;

  /** Where transactions over the memory budget spill (the default: java.io.tmpdir). */
  private Path spillDirectory;

  /** How long to wait for a slot held by another consumer to become free (the default: 0). */
  private Duration waitForSlot;

  /** How long to wait for the slot to be created (the default: 0, no limit). */
  private Duration slotCreationTimeout;

  /**
   * The checkpoint store's URI, as CheckpointStores.open takes it: file:/dir, rocksdb:/dir,
   * mapdb:/file or memory: (the default; nothing survives a restart, and a warning is logged). A
   * CdcCheckpointStore bean, when there is one, is used instead.
   */
  private String checkpointStore;

  /**
   * Whether a failed start fails the application context (true, the default), or is only logged and
   * reported as health DOWN (false).
   */
  private boolean failFast = true;

  /**
   * How long start waits for the source to start (streaming, or reading a new slot's initial
   * snapshot) when fail-fast is on.
   */
  private Duration startTimeout = Duration.ofSeconds(60);

  /**
   * The SmartLifecycle phase (the default: Integer.MAX_VALUE - 512): the source starts after and
   * stops before beans of lower phases, such as the web server (MAX - 1024 and MAX - 2048).
   */
  private int phase = Integer.MAX_VALUE - 512;

  /** The health check. */
  private final Health health = new Health();

  /** Returns whether a source is configured at all. */
  public boolean isEnabled() {
    return enabled;
  }

  /** Sets whether a source is configured at all. */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /** Returns the JDBC URL. */
  public String getJdbcUrl() {
    return jdbcUrl;
  }

  /** Sets the JDBC URL. */
  public void setJdbcUrl(String jdbcUrl) {
    this.jdbcUrl = jdbcUrl;
  }

  /** Returns the user. */
  public String getUser() {
    return user;
  }

  /** Sets the user. */
  public void setUser(String user) {
    this.user = user;
  }

  /** Returns the password. */
  public String getPassword() {
    return password;
  }

  /** Sets the password. */
  public void setPassword(String password) {
    this.password = password;
  }

  /** Returns primary-jdbc-url, or null when unset. */
  public String getPrimaryJdbcUrl() {
    return primaryJdbcUrl;
  }

  /** Sets primary-jdbc-url. */
  public void setPrimaryJdbcUrl(String primaryJdbcUrl) {
    this.primaryJdbcUrl = primaryJdbcUrl;
  }

  /** Returns the extra connection properties. */
  public Map<String, String> getConnectionProperties() {
    return connectionProperties;
  }

  /** Sets the extra connection properties. */
  public void setConnectionProperties(Map<String, String> connectionProperties) {
    this.connectionProperties = connectionProperties;
  }

  /** Returns the slot. */
  public String getSlot() {
    return slot;
  }

  /** Sets the slot. */
  public void setSlot(String slot) {
    this.slot = slot;
  }

  /** Returns the publication. */
  public String getPublication() {
    return publication;
  }

  /** Sets the publication. */
  public void setPublication(String publication) {
    this.publication = publication;
  }

  /** Returns create-slot, or null when unset. */
  public Boolean getCreateSlot() {
    return createSlot;
  }

  /** Sets create-slot. */
  public void setCreateSlot(Boolean createSlot) {
    this.createSlot = createSlot;
  }

  /** Returns create-publication, or null when unset. */
  public Boolean getCreatePublication() {
    return createPublication;
  }

  /** Sets create-publication. */
  public void setCreatePublication(Boolean createPublication) {
    this.createPublication = createPublication;
  }

  /** Returns the tables of a created publication; empty when unset. */
  public List<String> getPublicationTables() {
    return publicationTables;
  }

  /** Sets the tables of a created publication. */
  public void setPublicationTables(List<String> publicationTables) {
    this.publicationTables = publicationTables;
  }

  /** Returns the handler threads, or null when unset. */
  public Integer getHandlerThreads() {
    return handlerThreads;
  }

  /** Sets the handler threads. */
  public void setHandlerThreads(Integer handlerThreads) {
    this.handlerThreads = handlerThreads;
  }

  /** Returns the handler ordering, or null when unset. */
  public HandlerOrdering getHandlerOrdering() {
    return handlerOrdering;
  }

  /** Sets the handler ordering. */
  public void setHandlerOrdering(HandlerOrdering handlerOrdering) {
    this.handlerOrdering = handlerOrdering;
  }

  /** Returns the handoff capacity, or null when unset. */
  public Integer getHandoffCapacity() {
    return handoffCapacity;
  }

  /** Sets the handoff capacity. */
  public void setHandoffCapacity(Integer handoffCapacity) {
    this.handoffCapacity = handoffCapacity;
  }

  /** Returns the status interval, or null when unset. */
  public Duration getStatusInterval() {
    return statusInterval;
  }

  /** Sets the status interval. */
  public void setStatusInterval(Duration statusInterval) {
    this.statusInterval = statusInterval;
  }

  /** Returns the stop timeout, or null when unset. */
  public Duration getStopTimeout() {
    return stopTimeout;
  }

  /** Sets the stop timeout. */
  public void setStopTimeout(Duration stopTimeout) {
    this.stopTimeout = stopTimeout;
  }

  /** Returns trust-slot-position, or null when unset. */
  public Boolean getTrustSlotPosition() {
    return trustSlotPosition;
  }

  /** Sets trust-slot-position. */
  public void setTrustSlotPosition(Boolean trustSlotPosition) {
    this.trustSlotPosition = trustSlotPosition;
  }

  /** Returns allow-cluster-change, or null when unset. */
  public Boolean getAllowClusterChange() {
    return allowClusterChange;
  }

  /** Sets allow-cluster-change. */
  public void setAllowClusterChange(Boolean allowClusterChange) {
    this.allowClusterChange = allowClusterChange;
  }

  /** Returns allow-publication-change, or null when unset. */
  public Boolean getAllowPublicationChange() {
    return allowPublicationChange;
  }

  /** Sets allow-publication-change. */
  public void setAllowPublicationChange(Boolean allowPublicationChange) {
    this.allowPublicationChange = allowPublicationChange;
  }

  /** Returns failover-slot, or null when unset. */
  public Boolean getFailoverSlot() {
    return failoverSlot;
  }

  /** Sets failover-slot. */
  public void setFailoverSlot(Boolean failoverSlot) {
    this.failoverSlot = failoverSlot;
  }

  /** Returns the reconnection attempts, or null when unset. */
  public Integer getReconnectAttempts() {
    return reconnectAttempts;
  }

  /** Sets the reconnection attempts. */
  public void setReconnectAttempts(Integer reconnectAttempts) {
    this.reconnectAttempts = reconnectAttempts;
  }

  /** Returns the initial reconnection backoff, or null when unset. */
  public Duration getReconnectInitialBackoff() {
    return reconnectInitialBackoff;
  }

  /** Sets the initial reconnection backoff. */
  public void setReconnectInitialBackoff(Duration reconnectInitialBackoff) {
    this.reconnectInitialBackoff = reconnectInitialBackoff;
  }

  /** Returns the longest reconnection backoff, or null when unset. */
  public Duration getReconnectMaxBackoff() {
    return reconnectMaxBackoff;
  }

  /** Sets the longest reconnection backoff. */
  public void setReconnectMaxBackoff(Duration reconnectMaxBackoff) {
    this.reconnectMaxBackoff = reconnectMaxBackoff;
  }

  /** Returns the acknowledgement durability, or null when unset. */
  public AcknowledgementDurability getAcknowledgementDurability() {
    return acknowledgementDurability;
  }

  /** Sets the acknowledgement durability. */
  public void setAcknowledgementDurability(AcknowledgementDurability acknowledgementDurability) {
    this.acknowledgementDurability = acknowledgementDurability;
  }

  /** Returns the decode error policy, or null when unset. */
  public DecodeErrorPolicy getOnDecodeError() {
    return onDecodeError;
  }

  /** Sets the decode error policy. */
  public void setOnDecodeError(DecodeErrorPolicy onDecodeError) {
    this.onDecodeError = onDecodeError;
  }

  /** Returns the snapshot modes; empty when unset. */
  public List<SnapshotMode> getSnapshotModes() {
    return snapshotModes;
  }

  /** Sets the snapshot modes. */
  public void setSnapshotModes(List<SnapshotMode> snapshotModes) {
    this.snapshotModes = snapshotModes;
  }

  /** Returns the snapshot parallelism, or null when unset. */
  public Integer getSnapshotParallelism() {
    return snapshotParallelism;
  }

  /** Sets the snapshot parallelism. */
  public void setSnapshotParallelism(Integer snapshotParallelism) {
    this.snapshotParallelism = snapshotParallelism;
  }

  /** Returns the rows per snapshot chunk, or null when unset. */
  public Integer getSnapshotChunkRows() {
    return snapshotChunkRows;
  }

  /** Sets the rows per snapshot chunk. */
  public void setSnapshotChunkRows(Integer snapshotChunkRows) {
    this.snapshotChunkRows = snapshotChunkRows;
  }

  /** Returns messages, or null when unset. */
  public Boolean getMessages() {
    return messages;
  }

  /** Sets messages. */
  public void setMessages(Boolean messages) {
    this.messages = messages;
  }

  /** Returns the protocol version, or null when unset. */
  public Integer getProtocolVersion() {
    return protocolVersion;
  }

  /** Sets the protocol version. */
  public void setProtocolVersion(Integer protocolVersion) {
    this.protocolVersion = protocolVersion;
  }

  /** Returns the streaming mode, or null when unset. */
  public StreamingMode getStreaming() {
    return streaming;
  }

  /** Sets the streaming mode. */
  public void setStreaming(StreamingMode streaming) {
    this.streaming = streaming;
  }

  /** Returns two-phase, or null when unset. */
  public Boolean getTwoPhase() {
    return twoPhase;
  }

  /** Sets two-phase. */
  public void setTwoPhase(Boolean twoPhase) {
    this.twoPhase = twoPhase;
  }

  /** Returns binary, or null when unset. */
  public Boolean getBinary() {
    return binary;
  }

  /** Sets binary. */
  public void setBinary(Boolean binary) {
    this.binary = binary;
  }

  /** Returns the origin filter, or null when unset. */
  public OriginFilter getOrigin() {
    return origin;
  }

  /** Sets the origin filter. */
  public void setOrigin(OriginFilter origin) {
    this.origin = origin;
  }

  /** Returns the memory budget in bytes, or null when unset. */
  public Long getMemoryBudget() {
    return memoryBudget;
  }

  /** Sets the memory budget in bytes. */
  public void setMemoryBudget(Long memoryBudget) {
    this.memoryBudget = memoryBudget;
  }

  /** Returns the spill directory, or null when unset. */
  public Path getSpillDirectory() {
    return spillDirectory;
  }

  /** Sets the spill directory. */
  public void setSpillDirectory(Path spillDirectory) {
    this.spillDirectory = spillDirectory;
  }

  /** Returns the wait for a busy slot, or null when unset. */
  public Duration getWaitForSlot() {
    return waitForSlot;
  }

  /** Sets the wait for a busy slot. */
  public void setWaitForSlot(Duration waitForSlot) {
    this.waitForSlot = waitForSlot;
  }

  /** Returns the slot creation timeout, or null when unset. */
  public Duration getSlotCreationTimeout() {
    return slotCreationTimeout;
  }

  /** Sets the slot creation timeout. */
  public void setSlotCreationTimeout(Duration slotCreationTimeout) {
    this.slotCreationTimeout = slotCreationTimeout;
  }

  /** Returns the checkpoint store URI, or null when unset. */
  public String getCheckpointStore() {
    return checkpointStore;
  }

  /** Sets the checkpoint store URI. */
  public void setCheckpointStore(String checkpointStore) {
    this.checkpointStore = checkpointStore;
  }

  /** Returns whether a failed start fails the context. */
  public boolean isFailFast() {
    return failFast;
  }

  /** Sets whether a failed start fails the context. */
  public void setFailFast(boolean failFast) {
    this.failFast = failFast;
  }

  /** Returns how long a fail-fast start waits for the source to start. */
  public Duration getStartTimeout() {
    return startTimeout;
  }

  /** Sets how long a fail-fast start waits for the source to start. */
  public void setStartTimeout(Duration startTimeout) {
    this.startTimeout = startTimeout;
  }

  /** Returns the lifecycle phase. */
  public int getPhase() {
    return phase;
  }

  /** Sets the lifecycle phase. */
  public void setPhase(int phase) {
    this.phase = phase;
  }

  /** Returns the health check options. */
  public Health getHealth() {
    return health;
  }

  /** {@code datum.cdc.health.*}: the actuator health check. */
  public static class Health {
    /** Whether the datumCdc health indicator is registered. */
    private boolean enabled = true;

    /**
     * The slot's lag (pg_current_wal_lsn() - confirmed_flush_lsn) in bytes above which health is
     * reported with lag-status; unset or 0: lag is not checked.
     */
    private Long lagThresholdBytes;

    /** The status reported when the lag exceeds the threshold (the default: DOWN). */
    private String lagStatus = "DOWN";

    /** How long a lag reading is reused before the server is asked again. */
    private Duration lagCacheTime = Duration.ofSeconds(5);

    /** Returns whether the indicator is registered. */
    public boolean isEnabled() {
      return enabled;
    }

    /** Sets whether the indicator is registered. */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** Returns the lag threshold in bytes, or null when unset. */
    public Long getLagThresholdBytes() {
      return lagThresholdBytes;
    }

    /** Sets the lag threshold in bytes. */
    public void setLagThresholdBytes(Long lagThresholdBytes) {
      this.lagThresholdBytes = lagThresholdBytes;
    }

    /** Returns the status code reported over the threshold. */
    public String getLagStatus() {
      return lagStatus;
    }

    /** Sets the status code reported over the threshold. */
    public void setLagStatus(String lagStatus) {
      this.lagStatus = lagStatus;
    }

    /** Returns how long a lag reading is reused. */
    public Duration getLagCacheTime() {
      return lagCacheTime;
    }

    /** Sets how long a lag reading is reused. */
    public void setLagCacheTime(Duration lagCacheTime) {
      this.lagCacheTime = lagCacheTime;
    }
  }
}
