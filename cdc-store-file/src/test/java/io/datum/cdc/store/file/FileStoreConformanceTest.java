package io.datum.cdc.store.file;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import java.nio.file.Path;

/** The {@code file:} store against the conformance kit. */
class FileStoreConformanceTest extends CheckpointStoreConformanceKit {

  @Override
  protected CdcCheckpointStore open(Path directory) {
    return FileCheckpointStore.open(directory);
  }

  @Override
  protected String uri(Path directory) {
    return directory.toUri().toString();
  }
}
