/* names: Kubernetes name and key syntax rules (see names.h). The messages
 * are apimachinery's, because clients and tests compare them verbatim. */
#include "api/names.h"

#include "api/api-int.h"

#include <string.h>

static const char MSG_LABEL[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
static const char MSG_SUBDOMAIN[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char MSG_PREFIX_SUBDOMAIN[] =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char MSG_DNS1035[] =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
static const char MSG_QNAME_PART[] =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
static const char MSG_QNAME[] =
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with "
    "an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
static const char MSG_LABEL_VALUE[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
static const char MSG_CONFIG_KEY[] =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')";
static const char MSG_RESOURCE_STD[] =
    "must be a standard resource for containers (cpu, memory, ephemeral-storage, "
    "hugepages-<size>) or a fully qualified extended resource name such as 'example.com/foo'";

static bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool label_ok(const char *s, size_t n)
{
    if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

const char *api_check_dns1123_label(const char *s)
{
    size_t n = strlen(s);
    if (n > API_DNS1123_LABEL_MAX)
        return "must be no more than 63 characters";
    return label_ok(s, n) ? NULL : MSG_LABEL;
}

static bool subdomain_ok(const char *s, size_t n)
{
    if (n == 0)
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!label_ok(s + start, i - start))
                return false;
            start = i + 1;
        }
    }
    return true;
}

const char *api_check_dns1123_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n > API_DNS1123_SUBDOMAIN_MAX)
        return "must be no more than 253 characters";
    return subdomain_ok(s, n) ? NULL : MSG_SUBDOMAIN;
}

const char *api_check_dns1035_label(const char *s)
{
    size_t n = strlen(s);
    if (n > API_DNS1123_LABEL_MAX)
        return "must be no more than 63 characters";
    if (!label_ok(s, n) || !(s[0] >= 'a' && s[0] <= 'z'))
        return MSG_DNS1035;
    return NULL;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n) */
static bool qname_part_ok(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

const char *api_check_qualified_name(const char *s)
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    if (slash) {
        if (strchr(slash + 1, '/'))
            return MSG_QNAME;
        size_t plen = (size_t)(slash - s);
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > API_DNS1123_SUBDOMAIN_MAX)
            return "prefix part must be no more than 253 characters";
        if (!subdomain_ok(s, plen))
            return MSG_PREFIX_SUBDOMAIN;
        name = slash + 1;
    }
    size_t n = strlen(name);
    if (n == 0)
        return "name part must be non-empty";
    if (n > 63)
        return "name part must be no more than 63 characters";
    return qname_part_ok(name, n) ? NULL : MSG_QNAME_PART; /* IsQualifiedName: "name part" */
}

const char *api_check_label_value(const char *s)
{
    size_t n = strlen(s);
    if (n > API_LABEL_VALUE_MAX)
        return "must be no more than 63 characters";
    if (n == 0)
        return NULL;
    return qname_part_ok(s, n) ? NULL : MSG_LABEL_VALUE;
}

const char *api_check_config_key(const char *s)
{
    size_t n = strlen(s);
    if (n > API_DNS1123_SUBDOMAIN_MAX)
        return "must be no more than 253 characters";
    if (n == 0)
        return MSG_CONFIG_KEY;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return MSG_CONFIG_KEY;
    if (!strcmp(s, "."))
        return "must not be '.'";
    if (!strcmp(s, ".."))
        return "must not be '..'";
    if (!strncmp(s, "..", 2))
        return "must not start with '..'";
    return NULL;
}

const char *api_check_container_resource_name(const char *s)
{
    if (strchr(s, '/'))
        return api_check_qualified_name(s);
    if (!strcmp(s, "cpu") || !strcmp(s, "memory") || !strcmp(s, "ephemeral-storage"))
        return NULL;
    if (!strncmp(s, "hugepages-", 10) && s[10])
        return NULL;
    return MSG_RESOURCE_STD;
}

bool api_validate_name(const char *name, const char *(*fn)(const char *), size_t max_len,
                       bool prefix, const char *field, struct diag *d)
{
    char buf[API_DNS1123_SUBDOMAIN_MAX + 2];
    const char *subject = name;
    size_t n = strlen(name);
    if (prefix && n > 0 && n <= API_DNS1123_SUBDOMAIN_MAX && name[n - 1] == '-') {
        /* a generateName prefix may end in '-': check it as if it were 'a' */
        memcpy(buf, name, n);
        buf[n - 1] = 'a';
        buf[n] = '\0';
        subject = buf;
    }
    bool ok = true;
    const char *msg = fn(subject);
    if (msg) {
        api__diag_str(d, DIAG_INVALID, field, name, "%s", msg);
        ok = false;
    }
    if (max_len && n > max_len && !(msg && strstr(msg, "no more than"))) {
        api__diag_str(d, DIAG_INVALID, field, name, "must be no more than %zu characters",
                      max_len);
        ok = false;
    }
    return ok;
}

bool api_path_has_dotdot(const char *p)
{
    for (const char *s = p; s && *s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
        if (!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
            return true;
    return false;
}
