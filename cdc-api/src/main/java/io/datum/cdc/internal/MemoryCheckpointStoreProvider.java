package io.datum.cdc.internal;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStoreProvider;
import io.datum.cdc.MemoryCheckpointStore;
import java.net.URI;

/** Provides {@code memory:} stores. Not API. */
@AutoService(CheckpointStoreProvider.class)
public final class MemoryCheckpointStoreProvider implements CheckpointStoreProvider {

  /** Called by {@link java.util.ServiceLoader}. */
  public MemoryCheckpointStoreProvider() {}

  @Override
  public String scheme() {
    return "memory";
  }

  @Override
  public String description() {
    return "memory: - in-process only, lost on exit (cdc-api)";
  }

  @Override
  public CdcCheckpointStore open(URI uri) {
    String rest = uri.getSchemeSpecificPart();
    if (rest != null && !rest.isEmpty() && !rest.equals("/")) {
      throw new CdcConfigurationException(
          "memory checkpoint store URI takes nothing after the scheme: \"" + uri + '"');
    }
    return new MemoryCheckpointStore();
  }
}
