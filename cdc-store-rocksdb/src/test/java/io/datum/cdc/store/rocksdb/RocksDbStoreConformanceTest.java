package io.datum.cdc.store.rocksdb;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import java.nio.file.Path;

/**
 * Runs the conformance kit against {@link RocksDbCheckpointStore} with its default, durable
 * options. The kit's default {@code corrupt} (every file but {@code LOCK} overwritten with 0x5A
 * bytes) already makes the open fail: RocksDB rejects the damaged {@code CURRENT} file.
 */
class RocksDbStoreConformanceTest extends CheckpointStoreConformanceKit {

  @Override
  protected CdcCheckpointStore open(Path directory) {
    return RocksDbCheckpointStore.open(directory);
  }

  @Override
  protected String uri(Path directory) {
    return RocksDbCheckpointStore.uri(
        directory.toAbsolutePath(), RocksDbCheckpointStore.Options.defaults());
  }
}
