package io.datum.cdc;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Opens checkpoint stores by URI: {@code memory:}, {@code file:/var/lib/app/cdc}, and whatever
 * other schemes the {@link CheckpointStoreProvider}s on the class path handle.
 *
 * <p>Providers are found with {@link ServiceLoader}; a provider that fails to load does not hide
 * the others (its error is reported if no provider could be loaded at all). A store can also be
 * built directly in code, without this class.
 */
public final class CheckpointStores {

  private CheckpointStores() {}

  /**
   * Opens the store that {@code uri} names, using the providers visible to the thread's context
   * class loader (or this class's loader if there is none).
   *
   * @param uri a store URI such as {@code file:/var/lib/app/cdc}; not null
   * @return the open store; the caller closes it
   * @throws CdcConfigurationException if the URI has no scheme, no provider handles its scheme (the
   *     message lists the schemes found), or two providers claim the same scheme
   * @throws CdcStoreException if the provider cannot open the store
   */
  public static CdcCheckpointStore open(URI uri) {
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    return open(uri, loader != null ? loader : CheckpointStores.class.getClassLoader());
  }

  /**
   * Parses {@code uri} and opens the store it names; see {@link #open(URI)}. A URI of the scheme
   * alone, such as {@code memory:}, is read as {@code memory:/}, since {@link URI} requires a
   * scheme-specific part.
   *
   * @param uri a store URI string, such as {@code memory:} or {@code file:/tmp/cdc}
   * @return the open store
   * @throws CdcConfigurationException if the string is not a URI, or as {@link #open(URI)}
   * @throws CdcStoreException as {@link #open(URI)}
   */
  public static CdcCheckpointStore open(String uri) {
    if (uri == null) {
      throw new CdcConfigurationException("checkpoint store URI must not be null");
    }
    // java.net.URI needs something after the scheme: read a bare "memory:" as "memory:/"
    String text = uri.matches("[A-Za-z][A-Za-z0-9+.-]*:") ? uri + "/" : uri;
    try {
      return open(new URI(text));
    } catch (URISyntaxException e) {
      throw new CdcConfigurationException(
          "invalid checkpoint store URI \"" + uri + "\": " + e.getMessage(), e);
    }
  }

  /**
   * Opens the store that {@code uri} names, using the providers {@code loader} finds.
   *
   * @param uri a store URI, not null
   * @param loader the class loader to search for providers, not null
   * @return the open store
   * @throws CdcConfigurationException as {@link #open(URI)}
   * @throws CdcStoreException as {@link #open(URI)}
   */
  public static CdcCheckpointStore open(URI uri, ClassLoader loader) {
    if (uri == null || uri.getScheme() == null) {
      throw new CdcConfigurationException(
          "checkpoint store URI \""
              + uri
              + "\" has no scheme; use one of "
              + describe(providers(loader).values()));
    }
    String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
    Map<String, CheckpointStoreProvider> providers = providers(loader);
    CheckpointStoreProvider provider = providers.get(scheme);
    if (provider == null) {
      throw new CdcConfigurationException(
          "no checkpoint store for scheme \""
              + scheme
              + "\" in URI \""
              + uri
              + "\"; available on the class path: "
              + describe(providers.values())
              + " (add the module that provides it, e.g. io.datum.cdc:cdc-store-"
              + scheme
              + ")");
    }
    return provider.open(uri);
  }

  /**
   * Returns the providers {@code loader} finds, by scheme.
   *
   * @param loader the class loader to search, not null
   * @return an unmodifiable map from scheme to provider, sorted by scheme
   * @throws CdcConfigurationException if two providers claim the same scheme, naming both classes
   */
  public static Map<String, CheckpointStoreProvider> providers(ClassLoader loader) {
    Map<String, CheckpointStoreProvider> byScheme = new TreeMap<>();
    List<String> broken = new ArrayList<>();
    var iterator = ServiceLoader.load(CheckpointStoreProvider.class, loader).iterator();
    while (true) {
      CheckpointStoreProvider provider;
      try {
        if (!iterator.hasNext()) {
          break;
        }
        provider = iterator.next();
      } catch (ServiceConfigurationError e) {
        // one broken plugin jar must not hide the others; its error is reported if nothing fits
        broken.add(e.getMessage());
        continue;
      }
      CheckpointStoreProvider previous = byScheme.putIfAbsent(provider.scheme(), provider);
      if (previous != null) {
        throw new CdcConfigurationException(
            "two checkpoint store providers claim scheme \""
                + provider.scheme()
                + "\": "
                + previous.getClass().getName()
                + " and "
                + provider.getClass().getName());
      }
    }
    if (byScheme.isEmpty() && !broken.isEmpty()) {
      throw new CdcConfigurationException(
          "no checkpoint store provider could be loaded: " + String.join("; ", broken));
    }
    return Collections.unmodifiableMap(byScheme);
  }

  private static String describe(Collection<CheckpointStoreProvider> providers) {
    List<String> lines = new ArrayList<>();
    for (CheckpointStoreProvider p : providers) {
      lines.add(p.description());
    }
    return lines.isEmpty() ? "none" : String.join(", ", lines);
  }
}
