package io.redlock.spring.boot;

import io.redlock.TlsSettings;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;

/** {@link TlsSettings} from a Spring Boot SSL bundle, for {@code redlock.ssl.bundle}. */
final class RedlockSsl {
  private RedlockSsl() {}

  /**
   * A builder holding the trust managers, key managers, protocols and ciphers of the bundle
   * named {@code name}: the bundle's trust material trusts the nodes for their connections
   * only, as Spring Boot's own Redis connection does with {@code spring.data.redis.ssl.bundle}.
   *
   * @throws IllegalStateException naming {@code redlock.ssl.bundle} if there is no such bundle
   */
  static TlsSettings.Builder fromBundle(String name, SslBundles bundles) {
    if (bundles == null) {
      throw new IllegalStateException(
          "redlock.ssl.bundle is "
              + name
              + ", but the application has no SslBundles bean (Spring Boot's SSL"
              + " auto-configuration makes it from spring.ssl.bundle.*)");
    }
    SslBundle bundle;
    try {
      bundle = bundles.getBundle(name);
    } catch (NoSuchSslBundleException e) {
      throw new IllegalStateException(
          "redlock.ssl.bundle is "
              + name
              + ", which is not one of the spring.ssl.bundle.* bundles: "
              + e.getMessage(),
          e);
    }
    TlsSettings.Builder tls =
        TlsSettings.builder()
            .trustManagerFactory(bundle.getManagers().getTrustManagerFactory())
            .keyManagerFactory(bundle.getManagers().getKeyManagerFactory());
    SslOptions options = bundle.getOptions();
    if (options.getEnabledProtocols() != null) {
      tls.protocols(options.getEnabledProtocols());
    }
    if (options.getCiphers() != null) {
      tls.cipherSuites(options.getCiphers());
    }
    return tls;
  }
}
