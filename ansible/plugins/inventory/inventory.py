# -*- coding: utf-8 -*-
# Ansible inventory plugin for capo-apiserver: reads the groups, hosts and
# variables of CAPO clusters from the server's GraphQL endpoint.

from __future__ import annotations

DOCUMENTATION = r"""
name: inventory
short_description: Hosts, groups and variables of CAPO clusters from capo-apiserver
version_added: 0.1.0
description:
  - Reads the inventory of one or more Cluster API Provider OpenStack clusters from the GraphQL
    endpoint of capo-apiserver, with one query per run.
  - Groups, their children, hosts, group variables and host variables are added exactly as the
    server sends them; then C(compose), C(groups) and C(keyed_groups) apply to every host, seeing
    the host's variables merged over those of its groups.
  - Values from the server are never marked as trusted templates, so text such as C({{ x }}) in a
    server value stays text.
  - The configuration file name must end in C(.capo.yml) or C(.capo.yaml), or the file must be a
    YAML file whose C(plugin) key is C(capo.openstack.inventory).
  - Relative paths (C(token_file), C(ca_cert), C(kubeconfig)) are resolved from the current directory.
  - With C(kubeconfig), the server, its CA and the credentials (a token, a token file or a client
    certificate) come from a context of a kubeconfig, and the request goes through kube-apiserver to
    capo-apiserver's aggregated group-version; C(url), C(token) and C(ca_cert), when set, still win.
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: Marks this file as a configuration for this plugin.
    type: str
    required: true
    choices: ['capo.openstack.inventory']
  url:
    description:
      - The GraphQL endpoint, for example C(https://127.0.0.1:6443/graphql).
      - With C(kubeconfig) and no C(url), the context's server followed by
        C(/apis/extensions.capo-apiserver.io/v1alpha1/graphql).
    type: str
    env:
      - name: CAPO_GRAPHQL_URL
  kubeconfig:
    description: A kubeconfig whose context names the management cluster and the credentials to use.
    type: path
    env:
      - name: CAPO_KUBECONFIG
  context:
    description: The kubeconfig context to use. Unset means the kubeconfig's current-context.
    type: str
  token:
    description:
      - Bearer token sent to the server. When both are set, C(token) is used and C(token_file) ignored.
    type: str
    env:
      - name: CAPO_TOKEN
  token_file:
    description: File holding the bearer token (surrounding whitespace is ignored).
    type: path
    env:
      - name: CAPO_TOKEN_FILE
  namespace:
    description: Only clusters in this namespace. Unset means every namespace the token may read.
    type: str
  cluster:
    description: Only the cluster (OpenStackCluster) of this name.
    type: str
  label_selector:
    description: Only clusters whose labels match this Kubernetes label selector, for example C(env=prod,tier!=test).
    type: str
  ca_cert:
    description: PEM file of the CA that signed the server's certificate. Unset means the system's CAs.
    type: path
  validate_certs:
    description: Verify the server's certificate and name. Turn off only for throwaway test servers.
    type: bool
    default: true
  timeout:
    description: Seconds to wait for the server to connect and to answer.
    type: int
    default: 30
"""

EXAMPLES = r"""
# inventory.capo.yml: the embedded default of `npm start`, run from the repository root
plugin: capo.openstack.inventory
url: https://127.0.0.1:6443/graphql
token_file: data/token
ca_cert: data/pki/ca.crt

# One cluster; the token comes from the CAPO_TOKEN environment variable
plugin: capo.openstack.inventory
url: https://capo.example.com/graphql
namespace: team-a
cluster: prod
keyed_groups:
  - key: kube_network_plugin
    prefix: cni
compose:
  ansible_user: "'debian'"

# Through the management cluster's kube-apiserver, with a kubeconfig (token or client certificate)
plugin: capo.openstack.inventory
kubeconfig: ~/.kube/config
context: mgmt-admin
namespace: team-a

# Every cluster labelled env=prod, cached for ten minutes between runs
plugin: capo.openstack.inventory
url: https://capo.example.com/graphql
token_file: ~/.config/capo/token
label_selector: env=prod
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/capo-inventory
cache_timeout: 600
"""

import base64
import hashlib
import http.client
import json
import os
import ssl
import tempfile
import time
import urllib.error
import urllib.request

import yaml

from ansible.errors import AnsibleError, AnsibleParserError
from ansible.inventory.helpers import get_group_vars
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.unsafe_proxy import wrap_var
from ansible.utils.vars import combine_vars

INVENTORY_QUERY = """query AnsibleInventory($namespace: String, $name: String, $labelSelector: String) {
  inventory(namespace: $namespace, name: $name, labelSelector: $labelSelector) {
    revision
    groups { name hosts children vars }
    hosts { name vars }
  }
}"""

CONFIG_SUFFIXES = ('.capo.yml', '.capo.yaml')

# Where kube-apiserver's aggregator routes GraphQL to capo-apiserver.
AGGREGATED_GRAPHQL_PATH = '/apis/extensions.capo-apiserver.io/v1alpha1/graphql'

# An inventory of thousands of hosts is a few MiB; past this the answer is not one, and reading on would only fill memory.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
READ_CHUNK_BYTES = 64 * 1024

# What each GraphQL error code means for the person running Ansible.
ERROR_HINTS = {
    'UNAUTHENTICATED': 'the server rejected the token; check token, token_file, CAPO_TOKEN or CAPO_TOKEN_FILE',
    'FORBIDDEN': "the token's user may not read this inventory",
    'NOT_FOUND': 'not found; check namespace and cluster',
    'BAD_USER_INPUT': 'the server rejected the request; check namespace, cluster and label_selector',
}


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = 'capo.openstack.inventory'

    def verify_file(self, path):
        if not super().verify_file(path):
            return False
        if path.endswith(CONFIG_SUFFIXES):
            return True
        if path.endswith(('.yml', '.yaml')) and self._names_this_plugin(path):
            return True
        self.display.vvv('Skipping %s: the name does not end in .capo.yml or .capo.yaml and its plugin key is not %s' % (path, self.NAME))
        return False

    def _names_this_plugin(self, path):
        try:
            config = DataLoader().load_from_file(path, cache=False)
        except Exception:
            return False
        return isinstance(config, dict) and config.get('plugin') == self.NAME

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        query = InventoryQuery.from_options(self.get_option, path)
        data = self._load(query, cache)
        try:
            hosts = self._populate(data)
        except AnsibleError as error:
            raise AnsibleParserError(query.failure('the inventory from the server cannot be used: %s' % error))
        self._construct(hosts)

    def _load(self, query, cache):
        """The inventory from the cache when it is enabled and Ansible allows reading it, else from the server."""
        use_cache = self.get_option('cache')
        key = '%s_%s' % (self.NAME, query.cache_key())
        if use_cache and cache:
            try:
                cached = self._cache[key]
            except KeyError:
                cached = None
            if cached is not None:
                try:
                    data = validated_inventory(cached, query)
                    self.display.vvv('%s: inventory revision %s from the cache' % (query.url, data['revision']))
                    return data
                except AnsibleParserError as error:
                    self.display.warning('Ignoring the cached inventory, which cannot be used: %s' % error)
        data = validated_inventory(query.fetch(), query)
        self.display.vvv('%s: inventory revision %s from the server' % (query.url, data['revision']))
        if use_cache:
            self._cache[key] = data
        return data

    def _populate(self, data):
        """Adds the groups and hosts as given and returns every host name, in order."""
        names = {}
        for group in data['groups']:
            names[group['name']] = self.inventory.add_group(group['name'])
        hosts = []
        for group in data['groups']:
            group_name = names[group['name']]
            for child in group['children']:
                self.inventory.add_child(group_name, names.get(child) or self.inventory.add_group(child))
            for host in group['hosts']:
                self.inventory.add_host(host, group=group_name)
                hosts.append(host)
            for key, value in group['vars'].items():
                self.inventory.set_variable(group_name, key, wrap_var(value))
        for host in data['hosts']:
            self.inventory.add_host(host['name'])
            hosts.append(host['name'])
            for key, value in host['vars'].items():
                self.inventory.set_variable(host['name'], key, wrap_var(value))
        return list(dict.fromkeys(hosts))

    def _construct(self, hosts):
        strict = self.get_option('strict')
        for name in hosts:
            host = self.inventory.get_host(name)
            variables = combine_vars(get_group_vars(host.get_groups()), host.get_vars())
            self._set_composite_vars(self.get_option('compose'), variables, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option('groups'), variables, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option('keyed_groups'), variables, name, strict=strict)


class NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect would resend the bearer token to another address; it is reported instead."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class InventoryQuery:
    """One inventory request: where it goes, what it asks for, and how its failures read."""

    def __init__(self, url, token, namespace, cluster, label_selector, ca_cert, validate_certs, timeout):
        self.url = url
        self.token = token
        # From a kubeconfig: PEM text of the server's CA and of a client certificate and key.
        self.ca_data = None
        self.client_cert = None
        self.namespace = namespace
        self.cluster = cluster
        self.label_selector = label_selector
        self.ca_cert = ca_cert
        self.validate_certs = validate_certs
        self.timeout = timeout

    @classmethod
    def from_options(cls, get_option, path):
        kube = KubeconfigContext.load(get_option('kubeconfig'), get_option('context')) if get_option('kubeconfig') else None
        url = get_option('url') or (kube.server.rstrip('/') + AGGREGATED_GRAPHQL_PATH if kube else None)
        if not url:
            raise AnsibleParserError('%s: url is not set; set url or kubeconfig in %s, or CAPO_GRAPHQL_URL' % (InventoryModule.NAME, path))
        if not url.startswith(('https://', 'http://')):
            raise AnsibleParserError('%s: url %s must start with https:// or http://' % (InventoryModule.NAME, url))
        timeout = get_option('timeout')
        if timeout is None or timeout <= 0:
            raise AnsibleParserError('%s: timeout must be a positive number of seconds, got %s' % (InventoryModule.NAME, timeout))
        validate_certs = get_option('validate_certs') and not (kube and kube.insecure)
        query = cls(url, None, get_option('namespace') or None, get_option('cluster') or None, get_option('label_selector') or None,
                    get_option('ca_cert'), validate_certs, timeout)
        token, token_file = get_option('token'), get_option('token_file')
        if kube:
            query.ca_data = None if get_option('ca_cert') else kube.ca_data
            query.client_cert = kube.client_cert
            if not token and not token_file:
                token, token_file = kube.token, kube.token_file
            # A client certificate alone is a credential: no token is needed.
            if not token and not token_file and kube.client_cert:
                return query
        query.token = query.read_token(token, token_file, path)
        return query

    def read_token(self, token, token_file, path):
        source = 'token'
        if not token:
            if not token_file:
                raise AnsibleParserError(self.failure('no token; set token or token_file in %s, or CAPO_TOKEN or CAPO_TOKEN_FILE' % path))
            source = 'token_file %s' % token_file
            try:
                with open(token_file, 'r') as handle:
                    token = handle.read()
            except OSError as error:
                raise AnsibleParserError(self.failure('cannot read %s: %s' % (source, error.strerror or error)))
        token = token.strip()
        if not token:
            raise AnsibleParserError(self.failure('%s is empty' % source))
        # A header cannot carry it, and the error urllib would raise shows the token.
        if any(character.isspace() or not character.isprintable() for character in token):
            raise AnsibleParserError(self.failure('%s holds more than one word or line; a bearer token is a single word' % source))
        return token

    def scope(self):
        if self.cluster:
            return 'cluster %s/%s' % (self.namespace, self.cluster) if self.namespace else 'cluster %s' % self.cluster
        parts = []
        if self.namespace:
            parts.append('namespace %s' % self.namespace)
        if self.label_selector:
            parts.append('label selector %s' % self.label_selector)
        return ', '.join(parts) or 'all clusters'

    def failure(self, message):
        return '%s: inventory from %s (%s): %s' % (InventoryModule.NAME, self.url, self.scope(), message)

    def cache_key(self):
        identity = json.dumps([self.url, self.namespace, self.cluster, self.label_selector])
        return hashlib.sha256(identity.encode('utf-8')).hexdigest()[:20]

    def tls_context(self):
        if not self.url.startswith('https://'):
            return None
        if not self.validate_certs:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            return context
        try:
            if self.ca_cert:
                context = ssl.create_default_context(cafile=self.ca_cert)
            elif self.ca_data:
                context = ssl.create_default_context(cadata=self.ca_data)
            else:
                context = ssl.create_default_context()
            if self.client_cert:
                load_client_certificate(context, *self.client_cert)
            return context
        except ssl.SSLError as error:
            raise AnsibleParserError(self.failure('ca_cert %s holds no PEM certificate: %s' % (self.ca_cert, error.reason or error)))
        except OSError as error:
            raise AnsibleParserError(self.failure('cannot read ca_cert %s: %s' % (self.ca_cert, error.strerror or error)))

    def fetch(self):
        """POSTs the query and returns the `inventory` field of the answer; every failure is one AnsibleParserError."""
        body = json.dumps({
            'query': INVENTORY_QUERY,
            'operationName': 'AnsibleInventory',
            'variables': {'namespace': self.namespace, 'name': self.cluster, 'labelSelector': self.label_selector},
        }).encode('utf-8')
        headers = {'Content-Type': 'application/json', 'Accept': 'application/json', 'User-Agent': InventoryModule.NAME}
        if self.token:
            headers['Authorization'] = 'Bearer %s' % self.token
        request = urllib.request.Request(self.url, data=body, method='POST', headers=headers)
        handlers = [NoRedirects()]
        context = self.tls_context()
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        opener = urllib.request.build_opener(*handlers)
        started = time.monotonic()
        try:
            with opener.open(request, timeout=self.timeout) as response:
                status, reason, raw = response.status, response.reason, self.read_answer(response, started)
        except urllib.error.HTTPError as error:
            status, reason, raw = error.code, error.reason, self.read_answer(error, started)
            if 300 <= status < 400:
                raise AnsibleParserError(self.failure('the server redirects to %s; set url to that address' % error.headers.get('Location')))
        except urllib.error.URLError as error:
            raise AnsibleParserError(self.failure(self.connection_failure(error.reason)))
        except (ssl.SSLError, OSError, http.client.HTTPException) as error:
            raise AnsibleParserError(self.failure(self.connection_failure(error)))
        return self.answer(status, reason, raw)

    def read_answer(self, response, started):
        """The body, bounded in size and, across all its reads, in time: `timeout` alone bounds each read, not a server that drips."""
        chunks, size = [], 0
        while True:
            chunk = response.read(READ_CHUNK_BYTES)
            if not chunk:
                return b''.join(chunks)
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise AnsibleParserError(self.failure('the answer is larger than %d bytes; no inventory is that large' % MAX_ANSWER_BYTES))
            if time.monotonic() - started > 2 * self.timeout:
                raise AnsibleParserError(self.failure('the server did not finish its answer within %ss (twice the timeout)' % (2 * self.timeout)))
            chunks.append(chunk)

    def connection_failure(self, reason):
        if isinstance(reason, ssl.SSLCertVerificationError):
            return 'TLS failure: %s; set ca_cert to the CA that signed the server certificate' % (reason.verify_message or reason.reason)
        if isinstance(reason, ssl.SSLError):
            return 'TLS failure: %s' % (reason.reason or reason)
        if isinstance(reason, TimeoutError):
            return 'the server did not answer within %ss (timeout)' % self.timeout
        if isinstance(reason, OSError) and reason.strerror:
            return 'cannot reach the server: %s' % reason.strerror
        return 'cannot reach the server: %s' % reason

    def answer(self, status, reason, raw):
        try:
            document = json.loads(raw.decode('utf-8'))
        except (ValueError, RecursionError):
            # Not JSON, not UTF-8, or nested deeper than Python's parser goes: no answer the plugin can use.
            document = None
        errors = document.get('errors') if isinstance(document, dict) else None
        if errors is not None and not isinstance(errors, list):
            raise AnsibleParserError(self.failure('the answer has an errors field that is not a list: %s' % excerpt(raw)))
        if errors:
            raise AnsibleParserError(self.failure(graphql_failure(errors)))
        if status == 401:
            raise AnsibleParserError(self.failure('HTTP 401 Unauthorized: %s' % ERROR_HINTS['UNAUTHENTICATED']))
        if status == 403:
            raise AnsibleParserError(self.failure('HTTP 403 Forbidden: %s%s' % (ERROR_HINTS['FORBIDDEN'], status_message(document))))
        if status != 200:
            raise AnsibleParserError(self.failure('HTTP %s %s%s' % (status, reason, status_message(document) or ': ' + excerpt(raw))))
        if not isinstance(document, dict):
            raise AnsibleParserError(self.failure('the answer is not a JSON object: %s' % excerpt(raw)))
        data = document.get('data')
        if not isinstance(data, dict) or data.get('inventory') is None:
            raise AnsibleParserError(self.failure('the answer has no data.inventory: %s' % excerpt(raw)))
        return data['inventory']


def graphql_failure(errors):
    """One line for a GraphQL `errors` list: the first error's meaning and every message."""
    first = errors[0] if isinstance(errors[0], dict) else {}
    extensions = first.get('extensions') if isinstance(first.get('extensions'), dict) else {}
    code = extensions.get('code')
    messages = '; '.join(str(error.get('message')) if isinstance(error, dict) else str(error) for error in errors)
    if code in ERROR_HINTS:
        return '%s (%s: %s)' % (ERROR_HINTS[code], code, messages)
    return 'GraphQL error%s: %s' % (' %s' % code if code else '', messages)


def status_message(document):
    """The message of a Kubernetes Status body, which the server's authentication layer answers with."""
    if isinstance(document, dict) and document.get('kind') == 'Status' and document.get('message'):
        return ' (%s)' % document['message']
    return ''


def excerpt(raw):
    text = raw.decode('utf-8', 'replace').strip()
    return text if len(text) <= 200 else text[:200] + '...'


def validated_inventory(inventory, query):
    """Checks the shape the plugin relies on, so a bad answer (or cache entry) is named rather than crashing later."""
    def bad(where, what):
        raise AnsibleParserError(query.failure('unexpected inventory from the server: %s must be %s' % (where, what)))

    def string_list(value, where):
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            bad(where, 'a list of names')
        return value

    def variables(value, where):
        if value is None:
            return {}
        if not isinstance(value, dict):
            bad(where, 'an object')
        return value

    if not isinstance(inventory, dict):
        bad('inventory', 'an object')
    groups, hosts = inventory.get('groups'), inventory.get('hosts')
    if not isinstance(groups, list):
        bad('inventory.groups', 'a list')
    if not isinstance(hosts, list):
        bad('inventory.hosts', 'a list')
    result = {'revision': inventory.get('revision'), 'groups': [], 'hosts': []}
    for index, group in enumerate(groups):
        where = 'groups[%d]' % index
        if not isinstance(group, dict) or not isinstance(group.get('name'), str) or not group['name']:
            bad(where, 'an object with a name')
        result['groups'].append({
            'name': group['name'],
            'hosts': string_list(group.get('hosts'), where + '.hosts'),
            'children': string_list(group.get('children'), where + '.children'),
            'vars': variables(group.get('vars'), where + '.vars'),
        })
    for index, host in enumerate(hosts):
        where = 'hosts[%d]' % index
        if not isinstance(host, dict) or not isinstance(host.get('name'), str) or not host['name']:
            bad(where, 'an object with a name')
        result['hosts'].append({'name': host['name'], 'vars': variables(host.get('vars'), where + '.vars')})
    return result


class KubeconfigContext:
    """The server, CA and credentials of one context of a kubeconfig, as kubectl reads them."""

    def __init__(self, server, ca_data, insecure, token, token_file, client_cert):
        self.server = server
        self.ca_data = ca_data
        self.insecure = insecure
        self.token = token
        self.token_file = token_file
        self.client_cert = client_cert

    @classmethod
    def load(cls, path, context_name):
        where = 'kubeconfig %s' % path
        try:
            with open(path, 'r') as handle:
                config = yaml.safe_load(handle)
        except OSError as error:
            raise AnsibleParserError('%s: cannot read %s: %s' % (InventoryModule.NAME, where, error.strerror or error))
        except yaml.YAMLError as error:
            raise AnsibleParserError('%s: %s is not YAML: %s' % (InventoryModule.NAME, where, error))
        if not isinstance(config, dict):
            raise AnsibleParserError('%s: %s is not a kubeconfig' % (InventoryModule.NAME, where))
        base = os.path.dirname(os.path.abspath(path))
        name = context_name or config.get('current-context')
        if not name:
            raise AnsibleParserError('%s: %s has no current-context; set context' % (InventoryModule.NAME, where))
        context = named(config, 'contexts', 'context', name, where)
        cluster = named(config, 'clusters', 'cluster', context.get('cluster'), where)
        user = named(config, 'users', 'user', context.get('user'), where) if context.get('user') else {}
        if user.get('exec') or user.get('auth-provider'):
            raise AnsibleParserError('%s: %s user %s authenticates through a plugin (exec or auth-provider), which this plugin does not run; '
                                     'use a token, a token file or a client certificate' % (InventoryModule.NAME, where, context.get('user')))
        server = cluster.get('server')
        if not server:
            raise AnsibleParserError('%s: %s cluster %s has no server' % (InventoryModule.NAME, where, context.get('cluster')))
        certificate = pem(user, 'client-certificate', base, where)
        key = pem(user, 'client-key', base, where)
        return cls(server, pem(cluster, 'certificate-authority', base, where), bool(cluster.get('insecure-skip-tls-verify')),
                   user.get('token'), resolve(user.get('tokenFile'), base), (certificate, key) if certificate and key else None)


def named(config, collection, field, name, where):
    for entry in config.get(collection) or []:
        if isinstance(entry, dict) and entry.get('name') == name and isinstance(entry.get(field), dict):
            return entry[field]
    raise AnsibleParserError('%s: %s has no %s named %s' % (InventoryModule.NAME, where, field, name))


def resolve(path, base):
    return os.path.join(base, os.path.expanduser(path)) if path else None


def pem(section, key, base, where):
    """PEM text from `<key>-data` (base64) or the file `<key>` (relative to the kubeconfig), as kubectl reads them."""
    data = section.get(key + '-data')
    if data:
        try:
            return base64.b64decode(data).decode('utf-8')
        except (ValueError, UnicodeDecodeError):
            raise AnsibleParserError('%s: %s %s-data is not base64 of a PEM file' % (InventoryModule.NAME, where, key))
    path = resolve(section.get(key), base)
    if not path:
        return None
    try:
        with open(path, 'r') as handle:
            return handle.read()
    except OSError as error:
        raise AnsibleParserError('%s: %s cannot read %s %s: %s' % (InventoryModule.NAME, where, key, path, error.strerror or error))


def load_client_certificate(context, certificate, key):
    """ssl reads a certificate chain only from files: the PEM text goes through owner-only temporary files, removed at once."""
    with tempfile.TemporaryDirectory(prefix='capo-inventory-') as directory:
        paths = []
        for name, text in (('client.crt', certificate), ('client.key', key)):
            path = os.path.join(directory, name)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), 'w') as handle:
                handle.write(text)
            paths.append(path)
        context.load_cert_chain(*paths)
