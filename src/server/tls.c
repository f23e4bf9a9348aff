/*
 * tls: the server's certificates (docs/security.md, "TLS"). OpenSSL's
 * libcrypto makes them; libmicrohttpd (GnuTLS) serves them.
 *
 * <state-dir>/ca.crt, ca.key: a self-signed CA (ECDSA P-256, 10 years),
 * made at first start and kept: it is what the kubeconfig trusts
 * (certificate-authority-data). <state-dir>/server.crt, server.key: the
 * serving certificate (ECDSA P-256, 1 year), signed by that CA and made
 * again at every start, so that its names always match the listen
 * address: localhost, 127.0.0.1 and ::1, the --listen address, and for a
 * wildcard address (0.0.0.0, ::) the host name and every address of the
 * machine's interfaces. Every file is mode 0600.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/srv-int.h"
#include "server/statefiles.h"
#include "util/err.h"
#include "util/log.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define CA_DAYS 3650
#define SERVER_DAYS 365

static bool add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    if (!e)
        return false;
    bool ok = X509_add_ext(x, e, -1) == 1;
    X509_EXTENSION_free(e);
    return ok;
}

/* A certificate for key named cn; self-signed when issuer is NULL (a CA),
 * else signed by issuer/issuer_key with the names in san. NULL on error. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
                       const char *san, long days)
{
    X509 *x = X509_new();
    BIGNUM *serial = BN_new();
    bool ok = x && serial && X509_set_version(x, 2) &&
              BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
              BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) &&
              X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
              X509_gmtime_adj(X509_getm_notAfter(x), days * 86400L) && X509_set_pubkey(x, key);
    BN_free(serial);
    X509_NAME *name = ok ? X509_get_subject_name(x) : NULL;
    ok = ok && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"cueue",
                                          -1, -1, 0) &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) &&
         X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    if (ok && !issuer)
        ok = add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE") &&
             add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign") &&
             add_ext(x, &ctx, NID_subject_key_identifier, "hash");
    else if (ok)
        ok = add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") &&
             add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
             add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") &&
             add_ext(x, &ctx, NID_subject_alt_name, san) &&
             add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always");
    ok = ok && X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) > 0;
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static char *bio_text(BIO *b)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);
    return n > 0 ? xstrndup(data, (size_t)n) : NULL;
}

static char *cert_pem(X509 *x)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *res = b && PEM_write_bio_X509(b, x) ? bio_text(b) : NULL;
    BIO_free(b);
    return res;
}

static char *key_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *res =
        b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) ? bio_text(b) : NULL;
    BIO_free(b);
    return res;
}

/* Read the CA pair from the state directory; false when absent or bad. */
static bool read_ca(const char *dir, X509 **ca, EVP_PKEY **key)
{
    char *cp = xasprintf("%s/ca.crt", dir), *kp = xasprintf("%s/ca.key", dir);
    FILE *cf = fopen(cp, "r"), *kf = fopen(kp, "r");
    *ca = cf ? PEM_read_X509(cf, NULL, NULL, NULL) : NULL;
    *key = kf ? PEM_read_PrivateKey(kf, NULL, NULL, NULL) : NULL;
    if (cf)
        fclose(cf);
    if (kf)
        fclose(kf);
    xfree(cp);
    xfree(kp);
    if (*ca && *key && X509_check_private_key(*ca, *key) == 1)
        return true;
    X509_free(*ca);
    EVP_PKEY_free(*key);
    *ca = NULL;
    *key = NULL;
    return false;
}

static int write_pair(const char *dir, const char *name, const char *crt, const char *key,
                      char *err, size_t errlen)
{
    char *cp = xasprintf("%s/%s.crt", dir, name), *kp = xasprintf("%s/%s.key", dir, name);
    int rc = srv__write_file(kp, key, 0600, err, errlen);
    if (!rc)
        rc = srv__write_file(cp, crt, 0600, err, errlen);
    xfree(cp);
    xfree(kp);
    return rc;
}

/* ",IP:a,IP:b,DNS:host" for the machine's interfaces and host name. */
static void add_machine_names(struct sbuf *san)
{
    struct ifaddrs *ifs = NULL, *i;
    if (getifaddrs(&ifs) == 0) {
        for (i = ifs; i; i = i->ifa_next) {
            char a[INET6_ADDRSTRLEN];
            if (!i->ifa_addr)
                continue;
            if (i->ifa_addr->sa_family == AF_INET)
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof(a));
            else if (i->ifa_addr->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, a,
                          sizeof(a));
            else
                continue;
            if (strchr(a, '%') || srv__is_loopback(a) || !strncmp(a, "fe80", 4))
                continue;
            sbuf_addf(san, ",IP:%s", a);
        }
        freeifaddrs(ifs);
    }
    char host[256];
    if (gethostname(host, sizeof(host)) == 0 && *host && strcmp(host, "localhost") &&
        !strpbrk(host, ",: "))
        sbuf_addf(san, ",DNS:%s", host);
}

/* The subjectAltName value for listen_addr. */
static char *san_for(const char *listen_addr)
{
    struct sbuf san;
    sbuf_init(&san, 1 << 16);
    sbuf_adds(&san, "DNS:localhost,IP:127.0.0.1,IP:::1");
    if (!strcmp(listen_addr, "0.0.0.0") || !strcmp(listen_addr, "::"))
        add_machine_names(&san);
    else if (!srv__is_loopback(listen_addr))
        sbuf_addf(&san, ",IP:%s", listen_addr);
    return sbuf_take(&san);
}

int srv_tls_prepare(const char *state_dir, const char *listen_addr, struct srv_tls *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    X509 *ca = NULL, *crt = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    int rc = 0;
    if (!read_ca(state_dir, &ca, &ca_key)) {
        ca_key = EVP_EC_gen("P-256");
        ca = ca_key ? make_cert(ca_key, "cueue-ca", NULL, NULL, NULL, CA_DAYS) : NULL;
        char *cp = ca ? cert_pem(ca) : NULL, *kp = ca ? key_pem(ca_key) : NULL;
        if (!cp || !kp)
            rc = CU_EINTERNAL;
        else if (!(rc = write_pair(state_dir, "ca", cp, kp, err, errlen)))
            log_info("tls", "first start: made a CA in %s/ca.crt", state_dir);
        xfree(cp);
        xfree(kp);
    }
    char *san = san_for(listen_addr);
    if (!rc) {
        key = EVP_EC_gen("P-256");
        crt = key ? make_cert(key, "cueue-server", ca, ca_key, san, SERVER_DAYS) : NULL;
        out->ca_pem = cert_pem(ca);
        out->cert_pem = crt ? cert_pem(crt) : NULL;
        out->key_pem = key ? key_pem(key) : NULL;
        if (!out->ca_pem || !out->cert_pem || !out->key_pem)
            rc = CU_EINTERNAL;
        else
            rc = write_pair(state_dir, "server", out->cert_pem, out->key_pem, err, errlen);
    }
    if (rc == CU_EINTERNAL)
        snprintf(err, errlen, "cannot make the TLS certificates (OpenSSL)");
    if (!rc)
        log_info("tls", "serving certificate for %s", san);
    xfree(san);
    X509_free(ca);
    X509_free(crt);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    if (rc)
        srv_tls_release(out);
    return rc;
}

void srv_tls_release(struct srv_tls *t)
{
    xfree(t->ca_pem);
    xfree(t->cert_pem);
    if (t->key_pem)
        OPENSSL_cleanse(t->key_pem, strlen(t->key_pem));
    xfree(t->key_pem);
    memset(t, 0, sizeof(*t));
}
