//! Evaluates a ValidatingAdmissionPolicy and its binding from `deploy/` the
//! way the API server does, as far as a CEL interpreter can: the binding's
//! namespace selector (`Exists` terms), the policy's resource rules, match
//! conditions, variables in order, then every validation. A failing or
//! erroring validation denies (the policies are `failurePolicy: Fail`).
//! It is the fast first check; tests/it/real_cluster_policies.rs attacks the
//! same policies on a real API server, which alone proves type checking
//! against the schemas, cost limits and the exact request it builds.

pub mod attack;
pub mod session;

use cel::extractors::This;
use cel::{Context, Program, Value as Cel};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Every policy of one file (with its binding): a request is admitted when
/// each of them admits it.
pub struct Policy(Vec<(Value, Value)>);

/// One admission request, as the policy sees it.
#[derive(Clone)]
pub struct Request {
    pub group: &'static str,
    pub resource: &'static str,
    pub operation: &'static str,
    pub username: String,
    pub name: String,
    /// The namespace the object lives in (null for cluster-scoped objects).
    pub namespace: Value,
    pub object: Value,
    pub old_object: Value,
}

impl Request {
    /// `user` creates `object` (a `group`/`resource`) in `namespace`.
    pub fn create(group: &'static str, resource: &'static str, user: &str, namespace: &Value, object: Value) -> Self {
        Request {
            group,
            resource,
            operation: "CREATE",
            username: user.to_string(),
            name: object["metadata"]["name"].as_str().unwrap_or_default().to_string(),
            namespace: namespace.clone(),
            object,
            old_object: Value::Null,
        }
    }

    pub fn with_operation(mut self, operation: &'static str) -> Self {
        self.operation = operation;
        match operation {
            "DELETE" => self.old_object = std::mem::take(&mut self.object),
            "UPDATE" => self.old_object = self.object.clone(),
            _ => {}
        }
        self
    }
}

fn docs(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{}/../deploy/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| {
            serde_json::to_value(<serde_yaml_ng::Value as serde::Deserialize>::deserialize(doc).unwrap()).unwrap()
        })
        .collect()
}

fn eval(expression: &str, context: &Context) -> Result<Cel, String> {
    // `dyn(x)` only tells the API server's type checker to stop checking x;
    // at run time it is x (the interpreter has no such function).
    let expression = &expression.replace("dyn(", "(");
    let program = Program::compile(expression).map_err(|e| format!("`{expression}` does not compile: {e:?}"))?;
    program.execute(context).map_err(|e| format!("`{expression}` failed: {e:?}"))
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

impl Policy {
    /// The policies and bindings in `deploy/<path>`.
    pub fn load(path: &str) -> Self {
        let docs = docs(path);
        let policies = docs.iter().filter(|d| d["kind"] == "ValidatingAdmissionPolicy").map(|policy| {
            let binding = docs
                .iter()
                .find(|d| {
                    d["kind"] == "ValidatingAdmissionPolicyBinding"
                        && d["spec"]["policyName"] == policy["metadata"]["name"]
                })
                .cloned()
                .unwrap();
            assert_eq!(binding["spec"]["validationActions"], json!(["Deny"]));
            assert_eq!(policy["spec"]["failurePolicy"], "Fail");
            (policy.clone(), binding)
        });
        Policy(policies.collect())
    }

    /// `Ok` when every policy of the file admits `request`, else every denial.
    pub fn admit(&self, request: &Request) -> Result<(), Vec<String>> {
        let denials: Vec<String> =
            self.0.iter().filter_map(|(policy, binding)| admit(policy, binding, request).err()).flatten().collect();
        if denials.is_empty() {
            Ok(())
        } else {
            Err(denials)
        }
    }
}

fn selects(policy: &Value, binding: &Value, request: &Request) -> bool {
    let rules = policy["spec"]["matchConstraints"]["resourceRules"].as_array().unwrap();
    let rule_matches = rules.iter().any(|rule| {
        let has = |field: &str, wanted: &str| rule[field].as_array().unwrap().iter().any(|v| v == wanted || v == "*");
        has("apiGroups", request.group) && has("resources", request.resource) && has("operations", request.operation)
    });
    let selector = &binding["spec"]["matchResources"]["namespaceSelector"];
    // Cluster-scoped requests are not subject to a namespace selector.
    let namespace_matches = request.namespace.is_null()
        || selector["matchExpressions"].as_array().into_iter().flatten().all(|term| {
            assert_eq!(term["operator"], "Exists", "the harness knows only Exists");
            request.namespace["metadata"]["labels"].get(text(&term["key"])).is_some()
        });
    rule_matches && namespace_matches
}

/// `Ok` when admitted (or not matched), else every denial's message.
fn admit(policy: &Value, binding: &Value, request: &Request) -> Result<(), Vec<String>> {
    if !selects(policy, binding, request) {
        return Ok(());
    }
    let mut context = Context::default();
    context.add_function("join", join);
    let request_value = json!({
        "operation": request.operation,
        "name": request.name,
        "namespace": request.namespace["metadata"]["name"],
        "resource": { "group": request.group, "resource": request.resource },
        "userInfo": { "username": request.username },
    });
    for (name, value) in [
        ("object", &request.object),
        ("oldObject", &request.old_object),
        ("namespaceObject", &request.namespace),
        ("request", &request_value),
    ] {
        context.add_variable(name, value.clone()).unwrap();
    }
    let spec = &policy["spec"];
    for condition in spec["matchConditions"].as_array().into_iter().flatten() {
        match eval(text(&condition["expression"]), &context) {
            Ok(Cel::Bool(true)) => {}
            Ok(Cel::Bool(false)) => return Ok(()),
            other => return Err(vec![format!("match condition {}: {other:?}", condition["name"])]),
        }
    }
    let mut variables: HashMap<String, Cel> = HashMap::new();
    for variable in spec["variables"].as_array().into_iter().flatten() {
        let value = eval(text(&variable["expression"]), &context).map_err(|e| vec![e])?;
        variables.insert(text(&variable["name"]).to_string(), value);
        context.add_variable_from_value("variables", Cel::from(variables.clone()));
    }
    let denials: Vec<String> = spec["validations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|validation| match eval(text(&validation["expression"]), &context) {
            Ok(Cel::Bool(true)) => None,
            Ok(Cel::Bool(false)) => Some(match validation.get("messageExpression") {
                Some(message) => match eval(text(message), &context) {
                    Ok(Cel::String(message)) => message.to_string(),
                    other => format!("messageExpression failed: {other:?}"),
                },
                None => text(&validation["message"]).to_string(),
            }),
            other => Some(format!("error: {other:?}")),
        })
        .collect();
    if denials.is_empty() {
        Ok(())
    } else {
        Err(denials)
    }
}

/// Kubernetes' CEL string library `list.join(separator)`, which the
/// interpreter lacks (used in denial messages).
fn join(This(list): This<Cel>, separator: std::sync::Arc<String>) -> String {
    match list {
        Cel::List(items) => items
            .iter()
            .map(|item| match item {
                Cel::String(text) => text.to_string(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(separator.as_str()),
        other => format!("{other:?}"),
    }
}
