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
  - Relative paths (C(token_file), C(ca_cert)) are resolved from the current directory.
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
    description: The GraphQL endpoint, for example C(https://127.0.0.1:6443/graphql).
    type: str
    env:
      - name: CAPO_GRAPHQL_URL
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

import hashlib
import http.client
import json
import ssl
import time
import urllib.error
import urllib.request

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
        self.namespace = namespace
        self.cluster = cluster
        self.label_selector = label_selector
        self.ca_cert = ca_cert
        self.validate_certs = validate_certs
        self.timeout = timeout

    @classmethod
    def from_options(cls, get_option, path):
        url = get_option('url')
        if not url:
            raise AnsibleParserError('%s: url is not set; set url in %s or CAPO_GRAPHQL_URL' % (InventoryModule.NAME, path))
        if not url.startswith(('https://', 'http://')):
            raise AnsibleParserError('%s: url %s must start with https:// or http://' % (InventoryModule.NAME, url))
        timeout = get_option('timeout')
        if timeout is None or timeout <= 0:
            raise AnsibleParserError('%s: timeout must be a positive number of seconds, got %s' % (InventoryModule.NAME, timeout))
        query = cls(url, None, get_option('namespace') or None, get_option('cluster') or None, get_option('label_selector') or None,
                    get_option('ca_cert'), get_option('validate_certs'), timeout)
        query.token = query.read_token(get_option('token'), get_option('token_file'), path)
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
            return ssl.create_default_context(cafile=self.ca_cert) if self.ca_cert else ssl.create_default_context()
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
        request = urllib.request.Request(self.url, data=body, method='POST', headers={
            'Authorization': 'Bearer %s' % self.token,
            'Content-Type': 'application/json',
            'Accept': 'application/json',
            'User-Agent': InventoryModule.NAME,
        })
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
