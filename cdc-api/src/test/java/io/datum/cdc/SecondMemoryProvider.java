package io.datum.cdc;

import java.net.URI;

/**
 * A test provider that claims the {@code memory} scheme a second time. Deliberately NOT registered
 * in src/test/resources: tests list it in a services file in a temporary directory.
 */
public final class SecondMemoryProvider implements CheckpointStoreProvider {

  /** Called by {@link java.util.ServiceLoader}. */
  public SecondMemoryProvider() {}

  @Override
  public String scheme() {
    return "memory";
  }

  @Override
  public String description() {
    return "memory: - second, for tests";
  }

  @Override
  public CdcCheckpointStore open(URI uri) {
    return new MemoryCheckpointStore();
  }
}
