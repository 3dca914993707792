package io.datum.cdc.core.snapshot;

import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOptions;
import java.util.Set;

/**
 * The snapshot settings of one source, from {@code PgCdcSource.Builder}.
 *
 * @param initial snapshot every published table when the slot is created or the store holds no
 *     completed initial snapshot
 * @param stopAfterInitial stop the source once the initial snapshot is acknowledged
 * @param onRequest honour snapshot requests written into the WAL
 * @param enabled snapshots at all (false for NEVER: {@code PgCdcSource.snapshot} is refused)
 * @param parallelism connections reading at once, at least 1
 * @param chunkRows rows per chunk, at least 1
 */
public record SnapshotSettings(
    boolean initial,
    boolean stopAfterInitial,
    boolean onRequest,
    boolean enabled,
    int parallelism,
    int chunkRows) {

  /** No snapshots. */
  public static final SnapshotSettings NEVER =
      new SnapshotSettings(false, false, false, false, 1, 8192);

  /**
   * Returns the snapshot settings of a source's configuration.
   *
   * @param config the configuration
   * @return the settings its snapshot options make
   */
  public static SnapshotSettings of(SourceConfiguration config) {
    Set<SnapshotMode> modes = config.get(SourceOptions.SNAPSHOT_MODES);
    return new SnapshotSettings(
        modes.contains(SnapshotMode.INITIAL) || modes.contains(SnapshotMode.INITIAL_ONLY),
        modes.contains(SnapshotMode.INITIAL_ONLY),
        modes.contains(SnapshotMode.ON_REQUEST),
        !modes.contains(SnapshotMode.NEVER),
        config.get(SourceOptions.SNAPSHOT_PARALLELISM),
        config.get(SourceOptions.SNAPSHOT_CHUNK_ROWS));
  }

  /** Returns true if the stream must carry datum-cdc's WAL messages (watermarks, requests). */
  public boolean needsMessages() {
    return enabled;
  }
}
