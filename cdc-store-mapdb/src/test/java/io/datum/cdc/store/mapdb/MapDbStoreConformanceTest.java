package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import java.nio.file.Path;

/** The {@code mapdb:} store, with its default (crash-safe) options, against the conformance kit. */
class MapDbStoreConformanceTest extends CheckpointStoreConformanceKit {

  @Override
  protected CdcCheckpointStore open(Path directory) {
    return MapDbCheckpointStore.open(directory.resolve("checkpoints.mapdb"));
  }

  @Override
  protected String uri(Path directory) {
    return "mapdb:" + directory.resolve("checkpoints.mapdb");
  }
}
