//! Admins only: the clusters pools run on — how the worker reaches each,
//! and the switches that differ between them (empty: the worker's flag).
//! Every form posts without JavaScript too.

use super::field::{refused_field, Field};
use super::notice::{notice_view, query_notice};
use crate::model::{ActionNotice, Cluster, ClusterAccess, ClusterForm};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

/// Each cluster, with why its worker last failed if it did.
#[server(prefix = "/rpc", endpoint = "admin/clusters", output = crate::codec::JsonText)]
pub async fn list_clusters() -> Result<Vec<(Cluster, Option<String>)>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let clusters = crate::backend::clusters::list(&ctx.db, &principal).await?;
    let mut problems = crate::backend::clusters::problems(&ctx.db, &principal).await?;
    let listed = clusters.into_iter().map(|cluster| {
        let problem = problems.remove(&cluster.id);
        (cluster, problem)
    });
    Ok(listed.collect())
}

/// Adds (empty `id`) or replaces a cluster; a refusal is a notice.
#[server(prefix = "/rpc", endpoint = "admin/clusters/save", output = crate::codec::JsonText)]
pub async fn save_cluster(form: ClusterForm) -> Result<ActionNotice, RpcError> {
    use crate::backend::{clusters, ServiceError};
    let (principal, ctx) = crate::rpc::ctx()?;
    // Only admins learn whether the form was valid.
    principal.require_admin("only admins manage clusters")?;
    let saved = async {
        let spec = form.to_spec()?;
        if let Some(domain) = &spec.workspace_domain {
            crate::rules::cluster_spec::portal_outside(domain, &ctx.portal_host)?;
        }
        match form.id.trim() {
            "" => clusters::create(&ctx.db, &principal, spec).await,
            id => {
                let id = id.parse::<Uuid>().map_err(|_| ServiceError::NotFound("cluster"))?;
                clusters::update(&ctx.db, &principal, id, spec).await
            }
        }
    };
    crate::rpc::act(saved.await, |cluster| format!("Saved cluster {}.", cluster.name))
}

#[server(prefix = "/rpc", endpoint = "admin/clusters/delete", output = crate::codec::JsonText)]
pub async fn delete_cluster(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    crate::rpc::act(crate::backend::clusters::delete(&ctx.db, &principal, id).await, |_| "Cluster removed.".into())
}

/// Which cluster form was sent last, for its fault to show there only.
#[derive(Clone, Copy)]
struct Sent(RwSignal<Option<String>>);

#[component]
pub fn ClustersPage() -> impl IntoView {
    let save = ServerAction::<SaveCluster>::new();
    let remove = ServerAction::<DeleteCluster>::new();
    let from_query = query_notice();
    let (saved, removed) = (super::notice::deeds(save), super::notice::deeds(remove));
    let clusters = Resource::new(move || (saved.get(), removed.get()), |_| list_clusters());
    // The form sent last (its cluster's id, empty for a new one), kept by
    // the page: the forms are drawn again with the list after each answer.
    provide_context(Sent(super::field::last_sent(save, |asked| asked.form.id)));
    // The newest answer of either action.
    let newest = RwSignal::new(None::<Result<ActionNotice, RpcError>>);
    for value in [save.value(), remove.value()] {
        Effect::new(move |_| {
            if let Some(answer) = value.get() {
                newest.set(Some(answer));
            }
        });
    }
    view! {
        <section class="page-head"><h1>"Clusters"</h1></section>
        <p class="muted">"Each pool's sessions run on one cluster. A setting left empty follows the worker's flag of the same name. A cluster goes only when no pool runs on it; a pool moves (on its own page) only while it holds no live or future bookings."</p>
        {move || notice_view(super::notice::unless_beside(newest.get()), from_query.get())}
        <Transition fallback=|| view! { <p class="loading">"Loading clusters…"</p> }>
            {move || clusters.get().map(|result| match result {
                Ok(list) => view! {
                    <table class="bookings stacked" id="cluster-list">
                        <thead><tr><th>"Cluster"</th><th>"Reached"</th><th>"Settings"</th><th>"Pools"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
                        <tbody>
                            {list.into_iter().map(|(cluster, problem)| view! { <ClusterRow cluster problem save remove/> }).collect_view()}
                        </tbody>
                    </table>
                    <h2>"Add a cluster"</h2>
                    <ClusterFormView form=ClusterForm { access: "kubeconfig".into(), ..ClusterForm::default() } save/>
                }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load clusters: ", err),
            })}
        </Transition>
    }
}

/// How the worker reaches a cluster, in words.
fn reached(cluster: &Cluster) -> String {
    match (cluster.access, &cluster.kubeconfig_secret) {
        (ClusterAccess::Kubeconfig, Some(secret)) => format!("kubeconfig in Secret {secret}"),
        (ClusterAccess::InCluster, _) => "the worker's own credentials".into(),
        (ClusterAccess::Simulated, _) => "simulated (make run)".into(),
        (ClusterAccess::Kubeconfig, None) => "kubeconfig".into(),
    }
}

/// The switches the cluster sets itself; the rest follow the worker.
fn settings(cluster: &Cluster) -> String {
    let s = &cluster.switches;
    let on = |value: bool| if value { "on" } else { "off" };
    let set = [
        s.workspace_domain.as_ref().map(|d| format!("domain {d}")),
        s.expose.as_ref().map(|e| format!("expose {e}")),
        s.kueue.map(|k| format!("Kueue {}", on(k))),
        s.scale_ahead_minutes.map(|m| format!("scale ahead {m} min")),
        s.scale_ahead_mode.as_ref().map(|m| format!("by {m}")),
        s.image_cache.map(|c| format!("image cache {}", on(c))),
    ];
    let set: Vec<String> = set.into_iter().flatten().collect();
    if set.is_empty() {
        "all from the worker's flags".into()
    } else {
        set.join(" · ")
    }
}

#[component]
fn ClusterRow(
    cluster: Cluster,
    problem: Option<String>,
    save: ServerAction<SaveCluster>,
    remove: ServerAction<DeleteCluster>,
) -> impl IntoView {
    let (id, name) = (cluster.id.to_string(), cluster.name.clone());
    let pools = if cluster.pools.is_empty() { "none".to_string() } else { cluster.pools.join(", ") };
    let (row_id, edit_label, remove_label) =
        (format!("cluster-{name}"), format!("Edit {name}"), format!("Remove {name}"));
    view! {
        <tr id=row_id>
            <td data-label="Cluster"><strong>{name}</strong></td>
            <td data-label="Reached">{reached(&cluster)}
                {problem.map(|why| view! { <p class="cluster-problem">"Its worker says: " {why}</p> })}</td>
            <td data-label="Settings">{settings(&cluster)}</td>
            <td data-label="Pools">{pools}</td>
            <td data-label="Actions">
                <details class="disclosure">
                    <summary aria-label=edit_label>"Edit"</summary>
                    <ClusterFormView form=ClusterForm::of(&cluster) save/>
                </details>
                <ActionForm action=remove attr:class="inline">
                    <input type="hidden" name="id" value=id/>
                    <button class="button danger" type="submit" aria-label=remove_label>"Remove"</button>
                </ActionForm>
            </td>
        </tr>
    }
}

#[component]
fn ClusterFormView(form: ClusterForm, save: ServerAction<SaveCluster>) -> impl IntoView {
    let creating = form.id.is_empty();
    let prefix = if creating { "new".to_string() } else { form.name.clone() };
    // This form's last answer's fault: the page's forms share one action,
    // so only the form that was sent shows it (a script-less post's, the
    // new cluster's form).
    let id = form.id.clone();
    let Sent(sent) = expect_context::<Sent>();
    let from_query = query_notice();
    let refused = Signal::derive(move || match sent.with(|s| s.as_ref() == Some(&id)) {
        true => refused_field(save.value().get(), None),
        false => from_query.get().filter(|_| creating && save.value().with(Option::is_none)).and_then(|n| n.field),
    });
    let form_name = format!("cluster-{prefix}");
    let choice_form = form_name.clone();
    let text = move |label: &'static str, name: &'static str, value: String, hint: &'static str| {
        view! {
            <Field form=form_name.clone() name label refused let:aria>
                <input name=format!("form[{name}]") value=value.clone() placeholder=hint
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    // "" follows the worker's flag, as the table's NULL does.
    let choice = move |label: &'static str,
                       name: &'static str,
                       value: String,
                       options: &'static [(&'static str, &'static str)]| {
        view! {
            <Field form=choice_form.clone() name label refused let:aria>
                <select name=format!("form[{name}]") aria-invalid=move || aria.invalid()
                    aria-describedby=move || aria.described_by()>
                    {options.iter().map(|(option, text)| view! {
                        <option value=*option selected=value == *option>{*text}</option>
                    }).collect_view()}
                </select>
            </Field>
        }
    };
    const ACCESS: &[(&str, &str)] = &[
        ("in-cluster", "the worker's own credentials"),
        ("kubeconfig", "a kubeconfig Secret"),
        ("simulated", "simulated"),
    ];
    const ON_OFF: &[(&str, &str)] = &[("", "the worker's flag"), ("on", "on"), ("off", "off")];
    const EXPOSE: &[(&str, &str)] = &[("", "the worker's flag"), ("ingress", "Ingress"), ("route", "OpenShift Route")];
    const AHEAD: &[(&str, &str)] =
        &[("", "the worker's flag"), ("capacity-buffer", "CapacityBuffer"), ("placeholder", "placeholder pods")];
    view! {
        <ActionForm action=save attr:class="pool-form" attr:id=format!("cluster-form-{prefix}")>
            <input type="hidden" name="form[id]" value=form.id.clone()/>
            <fieldset><legend>{if creating { "New cluster" } else { "Cluster" }}</legend>
                {if creating {
                    text("Name (a DNS label; it never changes)", "name", form.name.clone(), "aws-east").into_any()
                } else {
                    view! { <input type="hidden" name="form[name]" value=form.name.clone()/> }.into_any()
                }}
                {choice("Reached through", "access", form.access.clone(), ACCESS)}
                {text("Kubeconfig Secret (in berth-clusters, key kubeconfig)", "kubeconfig_secret", form.kubeconfig_secret.clone(), "aws-east-kubeconfig")}
            </fieldset>
            <fieldset><legend>"Settings (empty: the worker's flag)"</legend>
                {text("Workspace domain", "workspace_domain", form.workspace_domain.clone(), "gpu.example.com")}
                {choice("Workspaces exposed by", "expose", form.expose.clone(), EXPOSE)}
                {choice("Kueue quota per session", "kueue", form.kueue.clone(), ON_OFF)}
                {text("Scale ahead (minutes before a window)", "scale_ahead_minutes", form.scale_ahead_minutes.clone(), "30")}
                {choice("Room held by", "scale_ahead_mode", form.scale_ahead_mode.clone(), AHEAD)}
                {choice("Image cache", "image_cache", form.image_cache.clone(), ON_OFF)}
            </fieldset>
            <button class="button" type="submit">{if creating { "Add cluster" } else { "Save" }}</button>
        </ActionForm>
    }
}
