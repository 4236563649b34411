//! The route table's lookup: path → the methods registered on it.

use crate::error::ApiError;
use crate::routes::Route;
use http::Method;
use std::collections::BTreeMap;

pub(crate) struct Router {
    paths: matchit::Router<usize>,
    /// Per path: method → index into `routes`.
    methods: Vec<BTreeMap<String, usize>>,
    routes: Vec<Route>,
}

/// A matched route with its path parameters.
pub(crate) struct Matched<'a> {
    pub route: &'a Route,
    pub params: Vec<(String, String)>,
}

impl Router {
    pub fn new(routes: Vec<Route>) -> Self {
        let mut paths = matchit::Router::new();
        let mut by_path: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut methods: Vec<BTreeMap<String, usize>> = Vec::new();
        for (index, route) in routes.iter().enumerate() {
            let slot = *by_path.entry(route.path).or_insert_with(|| {
                methods.push(BTreeMap::new());
                let slot = methods.len() - 1;
                paths
                    .insert(route.path, slot)
                    .unwrap_or_else(|e| panic!("route table: {} conflicts: {e}", route.path));
                slot
            });
            let previous = methods[slot].insert(route.method.as_str().to_owned(), index);
            assert!(
                previous.is_none(),
                "route table: {} {} registered twice",
                route.method,
                route.path
            );
        }
        Self {
            paths,
            methods,
            routes,
        }
    }

    /// Finds the route for `method` and `path`: 404 when no path matches,
    /// 405 (with the allowed methods) when the path exists without `method`.
    /// `HEAD` is served by the `GET` route.
    pub fn find(&self, method: &Method, path: &str) -> Result<Matched<'_>, ApiError> {
        let found = self.paths.at(path).map_err(|_| ApiError::RouteNotFound {
            path: path.to_owned(),
        })?;
        let methods = &self.methods[*found.value];
        let index = methods
            .get(method.as_str())
            .or_else(|| {
                (method == Method::HEAD)
                    .then(|| methods.get("GET"))
                    .flatten()
            })
            .ok_or_else(|| ApiError::MethodNotAllowed {
                method: method.to_string(),
                allow: methods.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
        let params = found
            .params
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Ok(Matched {
            route: &self.routes[*index],
            params,
        })
    }
}
