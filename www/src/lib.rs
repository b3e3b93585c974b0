//! The nomad-playground browser app (Yew). It renders view models that the
//! core computes and dispatches actions back; it makes no scheduling
//! decision of its own.

mod components;

use components::cluster::ClusterPanel;
use yew::prelude::*;

/// The root component.
#[component]
pub fn App() -> Html {
    let cluster = use_memo((), |_| nomad_playground::view::demo_cluster());
    html! {
        <div class="app">
            <header class="topbar" data-testid="topbar">
                <span class="brand">{ "nomad-playground" }</span>
                <span class="core-version" data-testid="core-version">
                    { format!("core v{}", nomad_playground::VERSION) }
                </span>
            </header>
            <main class="main">
                <ClusterPanel cluster={(*cluster).clone()} />
            </main>
        </div>
    }
}
